//! Where the gRPC port's TLS material lives: the flags, and the plain settings the app's TLS
//! reloader reads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::declare::{declared_defaults, settings};
use super::parse_duration;

settings! {
    /// TLS flags of `checkpointd serve`.
    pub struct TlsArgs => TlsValues {
        /// PEM certificate chain of the gRPC port; with --tls-key, the port speaks TLS only.
        /// Re-read when the file changes and on SIGHUP.
        #[arg(long, env = "CHECKPOINTD_TLS_CERT", requires = "tls_key")]
        pub tls_cert: PathBuf = unset;
        /// PEM private key of --tls-cert.
        #[arg(long, env = "CHECKPOINTD_TLS_KEY", requires = "tls_cert")]
        pub tls_key: PathBuf = unset;
        /// PEM CA bundle: clients must present a certificate it signed (mTLS).
        #[arg(long, env = "CHECKPOINTD_TLS_CLIENT_CA")]
        pub tls_client_ca: PathBuf = unset;
        /// How often the TLS files are checked for changes; `0s`: reload on SIGHUP only.
        #[arg(long, env = "CHECKPOINTD_TLS_RELOAD_INTERVAL")]
        pub tls_reload_interval: Duration = "2s", parsed by parse_duration;
    }
}

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
    /// The certificate and key, no client CA, checked as often as `--tls-reload-interval`'s
    /// default.
    pub fn new(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        Self {
            cert: cert.into(),
            key: key.into(),
            client_ca: None,
            reload_interval: declared_defaults::<TlsArgs>().tls_reload_interval,
        }
    }

    pub(crate) fn files(&self) -> impl Iterator<Item = &Path> {
        [Some(&self.cert), Some(&self.key), self.client_ca.as_ref()]
            .into_iter()
            .flatten()
            .map(PathBuf::as_path)
    }

    /// The TLS these values describe; no certificate = plain text.
    pub(super) fn from_values(values: TlsValues) -> Result<Option<Self>, String> {
        match (values.tls_cert, values.tls_key) {
            (Some(cert), Some(key)) => Ok(Some(Self {
                client_ca: values.tls_client_ca,
                reload_interval: values.tls_reload_interval,
                ..Self::new(cert, key)
            })),
            (None, None) if values.tls_client_ca.is_none() => Ok(None),
            (None, None) => Err("tls_client_ca needs tls_cert and tls_key".into()),
            _ => Err("tls_cert and tls_key go together".into()),
        }
    }
}
