//! How a client reaches checkpointd: the server URL, the TLS roots and client certificate for
//! `https://`, and the bearer token sent on every call. The CLI, `checkpointd health` and the
//! worker all dial through this, so they accept the same flags and behave alike.
//! [`Dial::connect`] makes the channel.

use std::path::{Path, PathBuf};

use clap::Args;
use secrecy::{ExposeSecret, SecretString};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// The header that carries the credential.
pub const AUTHORIZATION_HEADER: &str = "authorization";

/// TLS and credential flags shared by every command that talks to a server.
#[derive(Clone, Debug, Default, Args)]
pub struct DialArgs {
    /// PEM bundle of the CA that signed the server's certificate, for `https://` servers
    /// [default: the system's trusted roots].
    #[arg(long, global = true, env = "CHECKPOINTD_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
    /// PEM client certificate, for servers that require one (mTLS); needs --client-key.
    #[arg(long, global = true, env = "CHECKPOINTD_CLIENT_CERT")]
    pub client_cert: Option<PathBuf>,
    /// PEM private key of --client-cert.
    #[arg(long, global = true, env = "CHECKPOINTD_CLIENT_KEY")]
    pub client_key: Option<PathBuf>,
    /// Credential sent as `authorization: Bearer TOKEN` on every call (an API key or a JWT).
    #[arg(long, global = true, env = "CHECKPOINTD_TOKEN", hide_env_values = true, value_parser = parse_token)]
    pub token: Option<SecretString>,
}

/// A resolved way to reach one server: what [`DialArgs`] says, applied to a URL.
#[derive(Clone, Debug)]
pub struct Dial {
    url: String,
    tls: Option<ClientTlsConfig>,
    authorization: Option<MetadataValue<Ascii>>,
}

impl Dial {
    /// Plain `http://` (or `https://` against the system's roots), no credential.
    pub fn plain(url: &str) -> Result<Self, String> {
        DialArgs::default().dial(url)
    }

    /// The URL dialled.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// An endpoint for the URL, with TLS when the scheme is `https`.
    pub fn endpoint(&self) -> Result<Endpoint, String> {
        let endpoint = Endpoint::from_shared(self.url.clone())
            .map_err(|error| format!("invalid server URL {:?}: {error}", self.url))?;
        match &self.tls {
            None => Ok(endpoint),
            Some(tls) => endpoint
                .tls_config(tls.clone())
                .map_err(|error| format!("invalid TLS settings for {}: {error}", self.url)),
        }
    }

    /// The `authorization` value to send, marked sensitive so it never shows in `Debug`.
    pub fn authorization(&self) -> Option<&MetadataValue<Ascii>> {
        self.authorization.as_ref()
    }
}

impl DialArgs {
    /// Applies these flags to `url` (`http://` or `https://`), reading the PEM files now so a
    /// wrong path is reported before any connection is tried.
    pub fn dial(&self, url: &str) -> Result<Dial, String> {
        let tls = if url.starts_with("https://") {
            Some(self.tls_config()?)
        } else {
            if self.ca_cert.is_some() || self.client_cert.is_some() {
                return Err(format!(
                    "--ca-cert and --client-cert need an https:// server URL, not {url:?}"
                ));
            }
            None
        };
        let authorization = match &self.token {
            None => None,
            Some(token) => {
                let mut value: MetadataValue<Ascii> =
                    format!("Bearer {}", token.expose_secret().trim())
                        .parse()
                        .map_err(|_| "--token must be printable ASCII".to_owned())?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        Ok(Dial {
            url: url.to_owned(),
            tls,
            authorization,
        })
    }

    fn tls_config(&self) -> Result<ClientTlsConfig, String> {
        let mut config = ClientTlsConfig::new();
        config = match &self.ca_cert {
            Some(path) => config.ca_certificate(Certificate::from_pem(read(path, "--ca-cert")?)),
            None => config.with_native_roots(),
        };
        match (&self.client_cert, &self.client_key) {
            (None, None) => {}
            (Some(cert), Some(key)) => {
                config = config.identity(Identity::from_pem(
                    read(cert, "--client-cert")?,
                    read(key, "--client-key")?,
                ));
            }
            _ => return Err("--client-cert and --client-key go together".to_owned()),
        }
        Ok(config)
    }
}

fn parse_token(raw: &str) -> Result<SecretString, String> {
    Ok(SecretString::from(raw.to_owned()))
}

fn read(path: &Path, flag: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|error| format!("cannot read {flag} {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_never_shows_in_debug_output() {
        let args = DialArgs {
            token: Some("s3cret-token".into()),
            ..DialArgs::default()
        };
        let dial = args.dial("http://127.0.0.1:1").unwrap();
        assert_eq!(
            dial.authorization().unwrap().to_str().unwrap(),
            "Bearer s3cret-token"
        );
        let printed = format!("{args:?} {dial:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
    }

    #[test]
    fn tls_files_need_an_https_url() {
        let args = DialArgs {
            ca_cert: Some("/nonexistent/ca.pem".into()),
            ..DialArgs::default()
        };
        assert!(args.dial("http://127.0.0.1:1").is_err());
        let error = args.dial("https://127.0.0.1:1").unwrap_err();
        assert!(error.contains("--ca-cert"), "{error}");
    }
}
