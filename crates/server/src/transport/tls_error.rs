//! Why the TLS files do not make a server config: which file, and rustls's reason as a source.
//! Beside [`super::tls_settings`], so the startup error ([`crate::serve_error`]) can name it.

use std::path::PathBuf;

use rustls::pki_types::pem;

/// A TLS certificate, key or client CA that cannot be used. At startup it stops the server; on
/// reload it is logged and the previous config stays.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {flag} {}: {source}", path.display())]
    ReadCertificates {
        flag: &'static str,
        path: PathBuf,
        source: pem::Error,
    },
    #[error("{flag} {}: no certificate in it", path.display())]
    NoCertificate { flag: &'static str, path: PathBuf },
    #[error("cannot read a private key from --tls-key {}: {source}", path.display())]
    ReadKey { path: PathBuf, source: pem::Error },
    /// A half-rotated pair: the key is not the certificate's.
    #[error("--tls-key {} does not fit --tls-cert {}: {source}", key.display(), cert.display())]
    KeyMismatch {
        key: PathBuf,
        cert: PathBuf,
        source: rustls::Error,
    },
    #[error("TLS setup: {0}")]
    Setup(#[source] rustls::Error),
    #[error("invalid CA in --tls-client-ca {}: {source}", path.display())]
    InvalidClientCa {
        path: PathBuf,
        source: rustls::Error,
    },
    #[error("--tls-client-ca {}: {source}", path.display())]
    ClientVerifier {
        path: PathBuf,
        source: rustls::server::VerifierBuilderError,
    },
}
