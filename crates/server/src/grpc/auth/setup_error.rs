//! Why auth cannot be set up: each refusal that stops startup, with the file's error as a
//! source where one was read.

use std::net::SocketAddr;
use std::path::PathBuf;

/// An auth configuration the server refuses to start with.
#[derive(Debug, thiserror::Error)]
pub enum AuthSetupError {
    /// Auth `none` on an address other clients can reach, not allowed on purpose.
    #[error(
        "refusing to listen on {listen} without authentication: any client that can reach it \
         could read and change every tenant's data. Set --auth api-key and/or jwt \
         (CHECKPOINTD_AUTH), listen on a loopback address, or pass --allow-unauthenticated \
         (CHECKPOINTD_ALLOW_UNAUTHENTICATED=true) to run insecurely on purpose"
    )]
    Unauthenticated { listen: SocketAddr },
    #[error("cannot read --jwt-secret-file {}: {source}", path.display())]
    ReadJwtSecret {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the JWT secret must be at least 32 bytes")]
    ShortJwtSecret,
    /// The JWKS file or URL cannot be read; its message is the one a failed refresh logs.
    #[error("{0}")]
    Jwks(String),
}
