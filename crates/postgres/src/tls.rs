//! TLS to Postgres as libpq does it: `sslmode` (`disable`, `prefer`, `require`, `verify-ca`,
//! `verify-full`) and `sslrootcert=PATH` in the database URL, over rustls.
//!
//! tokio-postgres knows only disable/prefer/require and no `sslrootcert`, so both are taken out
//! of the URL here; what is left is parsed by tokio-postgres, and the verification the mode asks
//! for is done by the rustls config given to the connector:
//! - `prefer` (the default): encrypted when the server offers TLS, else plain text; the
//!   certificate is not checked;
//! - `require`: encrypted, the certificate not checked, unless a root CA is given
//!   (`sslrootcert`, or `~/.postgresql/root.crt` as libpq reads it), then as `verify-ca`;
//! - `verify-ca`: the chain must lead to the root CA; any host name;
//! - `verify-full`: the chain, and the certificate must name the host dialled.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode as WireMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The `sslmode` values libpq accepts (`allow` is read as `prefer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The TLS parameters found in a database URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgTls {
    pub mode: SslMode,
    pub root_cert: Option<PathBuf>,
}

/// Takes `sslmode` and `sslrootcert` out of `url` (a `postgres://` URL or a `key=value`
/// string); returns the rest, for tokio-postgres, and what they said.
pub fn split(url: &str) -> Result<(String, PgTls), String> {
    let mut mode = None;
    let mut root_cert = None;
    let mut take = |key: &str, value: &str| -> Result<bool, String> {
        match key {
            "sslmode" => {
                mode = Some(match value {
                    "disable" => SslMode::Disable,
                    "allow" | "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => return Err(format!("invalid sslmode {other:?}")),
                });
                Ok(true)
            }
            "sslrootcert" => {
                root_cert = Some(PathBuf::from(value));
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if url.contains("://") {
        match url.split_once('?') {
            None => url.to_owned(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&') {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(key, &percent_decode(value))? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = Vec::new();
        for token in url.split_whitespace() {
            let (key, value) = token.split_once('=').unwrap_or((token, ""));
            if !take(key, value.trim_matches('\''))? {
                kept.push(token);
            }
        }
        kept.join(" ")
    };
    Ok((
        rest,
        PgTls {
            mode: mode.unwrap_or(SslMode::Prefer),
            root_cert,
        },
    ))
}

/// `%XX` escapes decoded; anything else as it is.
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What tokio-postgres is told, and the connector that verifies as `tls` asks.
pub fn connector(tls: &PgTls) -> Result<(WireMode, MakeRustlsConnect), String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let root_cert = tls.root_cert.clone().or_else(default_root_cert);
    let roots = match (&root_cert, tls.mode) {
        (Some(path), SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull) => {
            Some(read_roots(path)?)
        }
        (None, SslMode::VerifyCa | SslMode::VerifyFull) => {
            return Err(
                "sslmode=verify-ca and verify-full need sslrootcert=PATH (a PEM CA bundle)"
                    .to_owned(),
            );
        }
        _ => None,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match roots {
        None => Arc::new(EncryptOnly(provider.clone())),
        Some(roots) => {
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|error| format!("sslrootcert: {error}"))?;
            if tls.mode == SslMode::VerifyFull {
                webpki
            } else {
                Arc::new(ChainOnly(webpki))
            }
        }
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("TLS setup: {error}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    let wire = match tls.mode {
        SslMode::Disable => WireMode::Disable,
        SslMode::Prefer => WireMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => WireMode::Require,
    };
    Ok((wire, MakeRustlsConnect::new(config)))
}

/// libpq's default root CA file, used when it exists.
fn default_root_cert() -> Option<PathBuf> {
    let path = Path::new(&std::env::var_os("HOME")?).join(".postgresql/root.crt");
    path.is_file().then_some(path)
}

fn read_roots(path: &Path) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|error| format!("cannot read sslrootcert {}: {error}", path.display()))?;
    for cert in certs {
        roots
            .add(cert)
            .map_err(|error| format!("invalid CA in sslrootcert {}: {error}", path.display()))?;
    }
    if roots.is_empty() {
        return Err(format!(
            "sslrootcert {}: no certificate in it",
            path.display()
        ));
    }
    Ok(roots)
}

/// `verify-ca`: the web PKI checks, except that the certificate may name any host.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The name is checked after the chain, so this error means the chain was good.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer`, and `require` without a root CA: encrypted, with the handshake's signatures
/// checked, but any certificate accepted, as libpq does.
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_parameters_are_taken_out_of_urls_and_conninfo_strings() {
        let (rest, tls) =
            split("postgres://u:p@db/x?sslmode=verify-full&application_name=a&sslrootcert=%2Ftmp%2Fca.pem")
                .unwrap();
        assert_eq!(rest, "postgres://u:p@db/x?application_name=a");
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.root_cert, Some(PathBuf::from("/tmp/ca.pem")));
        let (rest, tls) = split("postgres://db/x?sslmode=require").unwrap();
        assert_eq!(rest, "postgres://db/x");
        assert_eq!((tls.mode, tls.root_cert), (SslMode::Require, None));
        let (rest, tls) = split("host=db sslmode=verify-ca sslrootcert=/ca.pem user=u").unwrap();
        assert_eq!(rest, "host=db user=u");
        assert_eq!(tls.mode, SslMode::VerifyCa);
        assert_eq!(split("postgres://db/x").unwrap().1.mode, SslMode::Prefer);
        assert!(split("postgres://db/x?sslmode=sometimes").is_err());
    }

    #[test]
    fn an_unreadable_root_ca_is_an_error() {
        let tls = PgTls {
            mode: SslMode::VerifyFull,
            root_cert: Some("/nonexistent/ca.pem".into()),
        };
        assert!(connector(&tls).is_err());
    }
}
