//! Where the gRPC port's TLS material lives: plain settings, read by config and used by the app.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often, by default, the files' modification times are compared with the last load's.
pub const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(2);

/// Where the server's TLS material lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    /// PEM certificate chain, the server's own certificate first.
    pub cert: PathBuf,
    /// PEM private key of that certificate (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// PEM bundle of CAs whose client certificates are accepted; set = mTLS, a client
    /// without a valid certificate cannot connect.
    pub client_ca: Option<PathBuf>,
    /// How often the files are checked for changes; zero: only on SIGHUP.
    pub reload_interval: Duration,
}

impl TlsSettings {
    /// The certificate and key, no client CA, checked every [`DEFAULT_RELOAD_INTERVAL`].
    pub fn new(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        Self {
            cert: cert.into(),
            key: key.into(),
            client_ca: None,
            reload_interval: DEFAULT_RELOAD_INTERVAL,
        }
    }

    pub(crate) fn files(&self) -> impl Iterator<Item = &Path> {
        [Some(&self.cert), Some(&self.key), self.client_ca.as_ref()]
            .into_iter()
            .flatten()
            .map(PathBuf::as_path)
    }
}
