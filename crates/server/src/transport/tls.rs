//! TLS on the gRPC port: the certificate, key and optional client CA are read from files and
//! read again when they change on disk (polled) or on SIGHUP, without a restart.
//!
//! tonic's own `ServerTlsConfig` is fixed once the server is built, so TLS is terminated here,
//! over the guarded accept loop, with a rustls `ServerConfig` swapped whole on reload: each new
//! handshake takes the config current at that moment, and live connections keep the one they
//! were made with. A reload that fails (a half-written file, a key that does not match) keeps
//! the previous config and logs one warning; it is tried again only once the files change again.

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ServerConfig, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

use crate::config::TlsSettings;
use crate::shutdown::Shutdown;
use crate::transport::tls_error::TlsError;

/// What identifies one version of the files: modification time and size of each.
type Stamp = Vec<Option<(SystemTime, u64)>>;

/// The current rustls config, and how to make the next one.
pub struct TlsReloader {
    settings: TlsSettings,
    current: RwLock<Arc<ServerConfig>>,
    /// The files' stamp at the last attempt, successful or not.
    seen: Mutex<Stamp>,
}

impl TlsReloader {
    /// Loads the files once; an error here stops startup.
    pub fn load(settings: TlsSettings) -> Result<Arc<Self>, TlsError> {
        let stamp = stamp(&settings);
        let config = build_config(&settings)?;
        Ok(Arc::new(Self {
            settings,
            current: RwLock::new(Arc::new(config)),
            seen: Mutex::new(stamp),
        }))
    }

    /// An acceptor with the config current now, for one handshake.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(
            self.current
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .clone(),
        )
    }

    /// An acceptor for one HTTP/1.1 handshake (the web console) with the certificate current
    /// now: the same config, offering `http/1.1` instead of `h2`.
    pub fn http1_acceptor(&self) -> TlsAcceptor {
        let mut config = (*self
            .current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone())
        .clone();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        TlsAcceptor::from(Arc::new(config))
    }

    /// Reads the files again if they changed since the last attempt (or always, when `force`);
    /// returns whether a new config is in use.
    pub fn reload(&self, force: bool, why: &str) -> bool {
        let stamp = stamp(&self.settings);
        {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            if !force && *seen == stamp {
                return false;
            }
            *seen = stamp;
        }
        match build_config(&self.settings) {
            Ok(config) => {
                *self
                    .current
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(config);
                tracing::info!(why, cert = %self.settings.cert.display(), "TLS certificate reloaded");
                true
            }
            Err(error) => {
                tracing::warn!(
                    why,
                    %error,
                    "TLS reload failed; still serving the previous certificate"
                );
                false
            }
        }
    }
}

/// Reloads on SIGHUP and whenever the files change, until the shutdown begins.
pub fn watch(shutdown: &Shutdown, reloader: Arc<TlsReloader>) {
    let stop = shutdown.clone();
    let interval = reloader.settings.reload_interval;
    shutdown.spawn(async move {
        let mut hangup =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
                Ok(signal) => Some(signal),
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGHUP; TLS reloads on file change only");
                    None
                }
            };
        // A zero interval polls never (interval() would panic on it).
        let mut tick = tokio::time::interval(interval.max(Duration::from_millis(1)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let poll = async {
                if interval.is_zero() {
                    std::future::pending().await
                } else {
                    tick.tick().await
                }
            };
            let hup = async {
                match hangup.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = stop.begun() => return,
                _ = hup => { reloader.reload(true, "SIGHUP"); }
                _ = poll => { reloader.reload(false, "files changed"); }
            }
        }
    });
}

fn stamp(settings: &TlsSettings) -> Stamp {
    settings
        .files()
        .map(|path| {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.modified().ok()?, meta.len()))
        })
        .collect()
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A rustls server config from the files: HTTP/2 only, client certificates verified against
/// the client CA when there is one.
pub fn build_config(settings: &TlsSettings) -> Result<ServerConfig, TlsError> {
    let provider = provider();
    let certs = read_certs(&settings.cert, "--tls-cert")?;
    let key = PrivateKeyDer::from_pem_file(&settings.key).map_err(|source| TlsError::ReadKey {
        path: settings.key.clone(),
        source,
    })?;
    // Checks that the key is the certificate's, so a half-rotated pair is refused.
    let certified =
        CertifiedKey::from_der(certs, key, &provider).map_err(|source| TlsError::KeyMismatch {
            key: settings.key.clone(),
            cert: settings.cert.clone(),
            source,
        })?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Setup)?;
    let builder = match &settings.client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for cert in read_certs(path, "--tls-client-ca")? {
                roots
                    .add(cert)
                    .map_err(|source| TlsError::InvalidClientCa {
                        path: path.clone(),
                        source,
                    })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|source| TlsError::ClientVerifier {
                    path: path.clone(),
                    source,
                })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config =
        builder.with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

fn read_certs(path: &Path, flag: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|source| TlsError::ReadCertificates {
            flag,
            path: path.to_path_buf(),
            source,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            flag,
            path: path.to_path_buf(),
        });
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use checkpointd_testkit::TestCa;

    use super::*;

    #[test]
    fn a_failed_reload_keeps_the_old_config_until_the_files_change_again() {
        let ca = TestCa::new("test CA");
        let cert = ca.server_cert("server", &["localhost"]);
        let reloader = TlsReloader::load(TlsSettings::new(&cert.cert, &cert.key)).unwrap();
        let before = Arc::as_ptr(&reloader.current.read().unwrap());
        // Nothing changed: nothing is read.
        assert!(!reloader.reload(false, "test"));

        std::fs::write(&cert.cert, "not a certificate").unwrap();
        assert!(!reloader.reload(false, "test"));
        assert_eq!(Arc::as_ptr(&reloader.current.read().unwrap()), before);

        // A certificate that does not match the key is refused too.
        let other = ca.server_cert("other", &["localhost"]);
        std::fs::copy(&other.cert, &cert.cert).unwrap();
        assert!(!reloader.reload(false, "test"));
        assert_eq!(Arc::as_ptr(&reloader.current.read().unwrap()), before);

        let rotated = ca.server_cert("server", &["localhost"]);
        assert_eq!(rotated.cert, cert.cert);
        assert!(reloader.reload(false, "test"));
        assert_ne!(Arc::as_ptr(&reloader.current.read().unwrap()), before);
    }

    #[test]
    fn a_missing_or_mismatched_key_fails_startup() {
        let ca = TestCa::new("test CA");
        let cert = ca.server_cert("server", &["localhost"]);
        let other = ca.server_cert("other", &["localhost"]);
        let error = build_config(&TlsSettings::new(&cert.cert, &other.key)).unwrap_err();
        assert!(matches!(error, TlsError::KeyMismatch { .. }), "{error}");
        assert!(error.to_string().contains("does not fit"), "{error}");
        assert!(build_config(&TlsSettings::new(&cert.cert, "/nonexistent.key")).is_err());
    }
}
