//! `checkpointd health`: one gRPC health Check, for container health checks and scripts.
//!
//! It speaks the standard `grpc.health.v1` protocol, the same one Kubernetes' `grpc:` probes
//! use, so an image needs no extra probe binary. Exit 0 means SERVING; anything else (another
//! status, an unknown service, no connection, no answer in time) exits non-zero. Either way it
//! prints exactly one line.

use std::time::Duration;

use checkpointd_client::{CallHeaders, Dial, DialArgs};
use clap::Args;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use super::client::{CliError, code_name, server_url};
use checkpointd::config::parse_duration;

/// Flags of `checkpointd health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Server to ask, as HOST:PORT (or http://HOST:PORT, or https://HOST:PORT for TLS).
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub addr: String,
    /// Service to ask about; empty means the server as a whole.
    #[arg(long, default_value = "")]
    pub service: String,
    /// Longest the whole check may take, connecting included.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// TLS (`--ca-cert`, `--client-cert`, `--client-key`) and the `--token` credential.
    #[command(flatten)]
    pub dial: DialArgs,
}

/// Asks the server once; prints `SERVING` and returns Ok only when it is serving.
pub async fn health(args: HealthArgs) -> Result<(), Box<dyn std::error::Error>> {
    let url = server_url(&args.addr).map_err(|_| {
        CliError::Other(format!(
            "invalid --addr {:?}: expected HOST:PORT, e.g. 127.0.0.1:50051",
            args.addr
        ))
    })?;
    let dial = args.dial.dial(&url).map_err(CliError::Other)?;
    let status = tokio::time::timeout(args.timeout, check(&dial, &args.service))
        .await
        .map_err(|_| {
            CliError::Other(format!(
                "no health answer from {url} within {}",
                humantime::format_duration(args.timeout)
            ))
        })??;
    match status {
        ServingStatus::Serving => {
            println!("SERVING");
            Ok(())
        }
        other => Err(Box::new(CliError::Other(format!(
            "{} (service {:?} at {url})",
            other.as_str_name(),
            args.service
        )))),
    }
}

async fn check(dial: &Dial, service: &str) -> Result<ServingStatus, CliError> {
    let url = dial.url();
    let endpoint = dial.endpoint().map_err(CliError::Other)?;
    let channel = endpoint
        .connect()
        .await
        .map_err(|source| CliError::Unreachable {
            url: url.to_owned(),
            hint: "",
            source,
        })?;
    let mut request = tonic::Request::new(HealthCheckRequest {
        service: service.to_owned(),
    });
    CallHeaders::for_dial(dial).stamp(request.metadata_mut());
    let response = HealthClient::new(channel)
        .check(request)
        .await
        .map_err(|status| {
            CliError::Other(format!(
                "{}: {} (service {service:?} at {url})",
                code_name(status.code()),
                status.message()
            ))
        })?;
    // A status this client does not know is not SERVING, so it fails the check.
    Ok(ServingStatus::try_from(response.into_inner().status).unwrap_or(ServingStatus::Unknown))
}
