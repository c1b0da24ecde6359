//! Why `checkpointd serve` could not start or stopped serving: one type for every step from
//! the configuration to the last connection, each with the message the operator reads.

use std::error::Error as _;
use std::net::SocketAddr;

use checkpointd_core::error::{Error, failure};

use crate::grpc::auth::AuthSetupError;
use crate::transport::tls_error::TlsError;

/// A startup or serving failure. Each variant keeps the error under it as its source; the
/// message already shows that error's chain, since the binary prints the message alone.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A setting that does not hold (flags, environment, config file, auth, TLS, telemetry):
    /// the message names it and says how to fix it.
    #[error("{0}")]
    Setting(String),
    /// An auth configuration the server refuses to start with.
    #[error("{0}")]
    Auth(#[from] AuthSetupError),
    /// The TLS certificate, key or client CA cannot be used.
    #[error("{0}")]
    Tls(#[from] TlsError),
    /// The database the configuration names cannot be opened.
    #[error("cannot open {url}: {}", detail(source))]
    Database { url: String, source: Error },
    /// The Redis cache cannot be set up.
    #[error("{}", detail(.0))]
    Cache(#[source] Error),
    /// A listener cannot be bound; `setting` is the flag and variable its address came from,
    /// since with two listeners the reason alone does not say which one to change.
    #[error("cannot listen on {addr} ({setting}): {}", listen_reason(source))]
    Listen {
        addr: SocketAddr,
        setting: &'static str,
        source: std::io::Error,
    },
    /// A bound listener cannot say its address.
    #[error("{0}")]
    Address(#[from] std::io::Error),
    /// The gRPC router cannot be built (its reflection service).
    #[error("{0}")]
    Router(#[from] tonic_reflection::server::Error),
    /// Serving ended on a transport failure.
    #[error("{0}")]
    Transport(#[from] tonic::transport::Error),
}

/// The settings layers (clap's value parsers, the config file, auth, TLS) word their refusals
/// as text; they become a [`ServeError::Setting`] where startup meets them.
impl From<String> for ServeError {
    fn from(message: String) -> Self {
        Self::Setting(message)
    }
}

/// `error` with its sources: the driver's reason a database error carries.
fn detail(error: &Error) -> String {
    failure::detail(&error.to_string(), error.source())
}

/// What went wrong binding, in the operator's words for the two common cases.
fn listen_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::AddrInUse => "address already in use".to_owned(),
        std::io::ErrorKind::AddrNotAvailable => "address not available here".to_owned(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_that_cannot_be_opened_says_why_with_the_drivers_reason() {
        let refused = std::io::Error::other("connection refused");
        let error = ServeError::Database {
            url: "postgres://db/app".into(),
            source: Error::unavailable_from("cannot reach postgres at postgres://db/app", refused),
        };
        assert_eq!(
            error.to_string(),
            "cannot open postgres://db/app: storage unavailable: cannot reach postgres at \
             postgres://db/app: connection refused"
        );
    }

    #[test]
    fn a_listener_in_use_names_its_setting() {
        let error = ServeError::Listen {
            addr: "127.0.0.1:50051".parse().unwrap(),
            setting: "--listen / CHECKPOINTD_LISTEN",
            source: std::io::ErrorKind::AddrInUse.into(),
        };
        assert_eq!(
            error.to_string(),
            "cannot listen on 127.0.0.1:50051 (--listen / CHECKPOINTD_LISTEN): address already in use"
        );
    }
}
