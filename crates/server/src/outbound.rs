//! The HTTP client of the calls the server makes itself: an identity provider's JWKS (the gRPC
//! port's JWTs), OpenID discovery, token and keys (the console's sign-in) and webhook
//! deliveries. reqwest over rustls, trusting the system's roots plus the CAs of
//! `--outbound-ca-file`, following no redirect (a provider's endpoints are configured or
//! discovered, never redirected to; a webhook's signed body goes only where it was told).

use std::path::Path;
use std::time::Duration;

use checkpointd_core::error::failure;

/// The client every outbound call of the server shares; cheap to clone (one connection pool).
pub type OutboundHttp = reqwest::Client;

/// Longest a whole exchange, connection to last byte, may take unless a call says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The client, trusting `extra_ca_file`'s certificates besides the system's roots; a file that
/// cannot be read or holds no certificate stops startup.
pub fn client(extra_ca_file: Option<&Path>) -> Result<OutboundHttp, String> {
    // The process's TLS provider is ring everywhere; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .timeout(DEFAULT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("checkpointd/", env!("CARGO_PKG_VERSION")));
    if let Some(path) = extra_ca_file {
        let pem = std::fs::read(path).map_err(|error| {
            format!("cannot read --outbound-ca-file {}: {error}", path.display())
        })?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|error| {
            format!(
                "--outbound-ca-file {}: {}",
                path.display(),
                describe(&error)
            )
        })?;
        if certificates.is_empty() {
            return Err(format!(
                "--outbound-ca-file {} holds no PEM certificate",
                path.display()
            ));
        }
        builder = builder.tls_certs_merge(certificates);
    }
    builder.build().map_err(|error| {
        format!(
            "cannot build the outbound HTTP client: {}",
            describe(&error)
        )
    })
}

/// The body of `GET url` (which must answer 2xx), read up to `max_bytes`, within `timeout`.
pub async fn get(
    http: &OutboundHttp,
    url: &str,
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, String> {
    let mut response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(timeout)
        .send()
        .await
        .map_err(|error| describe(&error))?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| describe(&error))? {
        if bytes.len() + chunk.len() > max_bytes {
            return Err(format!("the answer is over {max_bytes} bytes"));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// An error with its causes: reqwest's own text names only the step ("error sending
/// request"), the reason (an unknown issuer, a refused connection) is in its sources.
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    failure::detail(&error.to_string(), error.source())
}
