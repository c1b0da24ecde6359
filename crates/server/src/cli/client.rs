//! The connection to the server: channel, tenant header, and errors phrased for an operator.

use std::fmt;
use std::time::Duration;

pub(super) use checkpointd_runner::client::error_chain;
use checkpointd_runner::dial::AUTHORIZATION_HEADER;
use checkpointd_runner::pages::LoadCalls;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

use super::Connection;
use crate::grpc::tenant::TENANT_HEADER;
use crate::proto;
use crate::proto::checkpoint_service_client::CheckpointServiceClient;
use crate::proto::task_service_client::TaskServiceClient;

/// How long connecting may take before the command gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one call may take; operator calls are single reads or transitions.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Checkpoints can be large; the server's own ceiling is what really limits them.
const MAX_DECODE_BYTES: usize = 256 << 20;

/// What an operator command reports when it fails; printed by `main` as `checkpointd: ...`.
#[derive(Debug)]
pub enum CliError {
    /// The server answered with a gRPC status.
    Status { code: Code, message: String },
    /// Anything else: bad flags, no connection.
    Other(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status { code, message } => write!(f, "{}: {message}", code_name(*code)),
            Self::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CliError {}

/// The canonical upper-case name of a gRPC code, as `grpcurl` and `buf curl` print it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A connected channel plus what every request carries.
pub struct Client {
    channel: Channel,
    tenant: Option<AsciiMetadataValue>,
    authorization: Option<AsciiMetadataValue>,
    server: String,
}

impl Client {
    /// Connects eagerly, so an unreachable server is reported before any command runs.
    pub async fn connect(connection: &Connection) -> Result<Self, CliError> {
        let server = server_url(&connection.server)?;
        let tenant = match &connection.tenant {
            None => None,
            Some(tenant) if !tenant.is_ascii() => {
                return Err(CliError::Other(format!(
                    "invalid --tenant {tenant:?}: it must be printable ASCII"
                )));
            }
            Some(tenant) => Some(tenant.parse().map_err(|_| {
                CliError::Other(format!(
                    "invalid --tenant {tenant:?}: it must be printable ASCII"
                ))
            })?),
        };
        let dial = connection.dial.dial(&server).map_err(CliError::Other)?;
        let endpoint = dial
            .endpoint()
            .map_err(|error| {
                CliError::Other(format!("{error} (expected e.g. http://127.0.0.1:50051)"))
            })?
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(CALL_TIMEOUT);
        let channel = endpoint.connect().await.map_err(|error| {
            CliError::Other(format!(
                "cannot connect to checkpointd at {server}: {} \
                 (is `checkpointd serve` running there? set --server or CHECKPOINTD_SERVER)",
                error_chain(&error)
            ))
        })?;
        Ok(Self {
            channel,
            tenant,
            authorization: dial.authorization().cloned(),
            server,
        })
    }

    pub fn tasks(&self) -> TaskServiceClient<Channel> {
        TaskServiceClient::new(self.channel.clone()).max_decoding_message_size(MAX_DECODE_BYTES)
    }

    pub fn checkpoints(&self) -> CheckpointServiceClient<Channel> {
        CheckpointServiceClient::new(self.channel.clone())
            .max_decoding_message_size(MAX_DECODE_BYTES)
    }

    /// Wraps a message in a request that names the tenant and carries the credential, when
    /// they were given.
    pub fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        if let Some(tenant) = &self.tenant {
            request.metadata_mut().insert(TENANT_HEADER, tenant.clone());
        }
        if let Some(authorization) = &self.authorization {
            request
                .metadata_mut()
                .insert(AUTHORIZATION_HEADER, authorization.clone());
        }
        request
    }

    /// Turns a failed call into an operator-facing error, with a hint where one helps.
    pub fn status(&self, status: Status) -> CliError {
        let code = status.code();
        let mut message = status.message().to_owned();
        match code {
            Code::Unimplemented => message.push_str(&format!(
                " (the server at {} does not serve this service; is it a checkpointd with a task queue?)",
                self.server
            )),
            Code::Unavailable if message.is_empty() || message.contains("transport") => {
                message.push_str(&format!(" (lost the connection to {})", self.server));
            }
            _ => {}
        }
        CliError::Status { code, message }
    }
}

/// The server URL to dial: `host:port` alone means plain `http://host:port`; `https://` is TLS.
pub(super) fn server_url(raw: &str) -> Result<String, CliError> {
    let trimmed = raw.trim().trim_end_matches('/');
    if trimmed.is_empty() {
        return Err(CliError::Other("--server must not be empty".to_owned()));
    }
    match trimmed.split_once("://") {
        None => Ok(format!("http://{trimmed}")),
        Some(("http" | "https", _)) => Ok(trimmed.to_owned()),
        Some((scheme, _)) => Err(CliError::Other(format!(
            "invalid --server URL {raw:?}: scheme {scheme:?} is not http or https \
             (expected e.g. http://127.0.0.1:50051)"
        ))),
    }
}

/// The loads the CLI makes follow a paged answer to its last page, with the CLI's tenant and
/// credential on every page.
#[async_trait::async_trait]
impl LoadCalls for Client {
    async fn load_latest(
        &self,
        request: proto::LoadLatestRequest,
    ) -> Result<proto::LoadLatestResponse, Status> {
        let request = self.request(request);
        Ok(self.checkpoints().load_latest(request).await?.into_inner())
    }

    async fn load_at_step(
        &self,
        request: proto::LoadAtStepRequest,
    ) -> Result<proto::LoadAtStepResponse, Status> {
        let request = self.request(request);
        Ok(self.checkpoints().load_at_step(request).await?.into_inner())
    }

    async fn resume(&self, request: proto::ResumeRequest) -> Result<proto::ResumeResponse, Status> {
        let request = self.request(request);
        Ok(self.checkpoints().resume(request).await?.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_host_and_port_means_plain_http() {
        assert_eq!(
            server_url("127.0.0.1:50051").unwrap(),
            "http://127.0.0.1:50051"
        );
        assert_eq!(server_url("http://h:1/").unwrap(), "http://h:1");
        assert!(server_url("grpc://h:1").is_err());
        assert_eq!(server_url("https://h:1").unwrap(), "https://h:1");
    }

    #[test]
    fn a_status_prints_as_its_canonical_code_and_message() {
        let error = CliError::Status {
            code: Code::NotFound,
            message: "task 1 not found".to_owned(),
        };
        assert_eq!(error.to_string(), "NOT_FOUND: task 1 not found");
    }
}
