//! Authentication flags of `checkpointd serve`, their config-file keys and their resolution.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::Deserialize;

use super::parse_duration;
use crate::grpc::auth::jwks_fetch::check_url;
use crate::grpc::auth::{AuthSettings, JwtKeys, JwtSettings};

/// How often a JWKS is read again when nothing else prompts it.
const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(300);

/// Authentication flags; each also reads a `CHECKPOINTD_*` variable.
#[derive(Debug, Default, Args)]
pub struct AuthArgs {
    /// How callers authenticate: `none`, `api-key`, `jwt` or `api-key,jwt` [default: none,
    /// allowed only on a loopback --listen address]. JWT `exp` and `nbf` are honoured with 60 s
    /// of clock leeway; an unknown API key id is remembered for 5 s.
    #[arg(long, env = "CHECKPOINTD_AUTH")]
    pub auth: Option<String>,
    /// Serve without authentication on a non-loopback address: any client reaching it may
    /// read and change every tenant's data.
    #[arg(long, env = "CHECKPOINTD_ALLOW_UNAUTHENTICATED")]
    pub allow_unauthenticated: bool,
    /// File holding the HS256 shared secret JWTs are signed with (at least 32 bytes).
    #[arg(long, env = "CHECKPOINTD_JWT_SECRET_FILE")]
    pub jwt_secret_file: Option<PathBuf>,
    /// JWKS file with the public keys JWTs are signed with; re-read every --jwt-jwks-refresh.
    #[arg(long, env = "CHECKPOINTD_JWT_JWKS_FILE")]
    pub jwt_jwks_file: Option<PathBuf>,
    /// http:// URL of the JWKS; refetched every --jwt-jwks-refresh and on an unknown `kid`.
    #[arg(long, env = "CHECKPOINTD_JWT_JWKS_URL")]
    pub jwt_jwks_url: Option<String>,
    /// Required `iss` claim.
    #[arg(long, env = "CHECKPOINTD_JWT_ISSUER")]
    pub jwt_issuer: Option<String>,
    /// Required `aud` claim.
    #[arg(long, env = "CHECKPOINTD_JWT_AUDIENCE")]
    pub jwt_audience: Option<String>,
    /// Claim naming the caller's tenant [default: tenant_id].
    #[arg(long, env = "CHECKPOINTD_JWT_TENANT_CLAIM")]
    pub jwt_tenant_claim: Option<String>,
    /// Claim naming the caller's role: agent, operator or admin [default: role].
    #[arg(long, env = "CHECKPOINTD_JWT_ROLE_CLAIM")]
    pub jwt_role_claim: Option<String>,
    /// How old a JWKS may get before it is read again [default: 5m].
    #[arg(long, env = "CHECKPOINTD_JWT_JWKS_REFRESH", value_parser = parse_duration)]
    pub jwt_jwks_refresh: Option<Duration>,
}

/// The config file's authentication keys (the flags' names, with underscores).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthFile {
    pub(super) auth: Option<String>,
    pub(super) allow_unauthenticated: Option<bool>,
    pub(super) jwt_secret_file: Option<PathBuf>,
    pub(super) jwt_jwks_file: Option<PathBuf>,
    pub(super) jwt_jwks_url: Option<String>,
    pub(super) jwt_issuer: Option<String>,
    pub(super) jwt_audience: Option<String>,
    pub(super) jwt_tenant_claim: Option<String>,
    pub(super) jwt_role_claim: Option<String>,
    pub(super) jwt_jwks_refresh: Option<String>,
}

impl AuthArgs {
    /// These flags over the file's keys over the defaults.
    pub(super) fn resolve(self, file: AuthFile) -> Result<AuthSettings, String> {
        let mode = self.auth.or(file.auth).unwrap_or_else(|| "none".into());
        let (api_keys, jwt) = parse_mode(&mode)?;
        let secret = self.jwt_secret_file.or(file.jwt_secret_file);
        let jwks_file = self.jwt_jwks_file.or(file.jwt_jwks_file);
        let jwks_url = self.jwt_jwks_url.or(file.jwt_jwks_url);
        let sources = [secret.is_some(), jwks_file.is_some(), jwks_url.is_some()];
        let given = sources.iter().filter(|given| **given).count();
        if !jwt {
            if given > 0 {
                return Err(format!(
                    "--jwt-secret-file, --jwt-jwks-file or --jwt-jwks-url given, but --auth \
                     {mode:?} does not include jwt"
                ));
            }
            return Ok(AuthSettings {
                api_keys,
                jwt: None,
                allow_unauthenticated: self.allow_unauthenticated
                    || file.allow_unauthenticated.unwrap_or(false),
            });
        }
        let keys = match (secret, jwks_file, jwks_url) {
            (Some(path), None, None) => JwtKeys::SecretFile(path),
            (None, Some(path), None) => JwtKeys::JwksFile(path),
            (None, None, Some(url)) => {
                check_url(&url)?;
                JwtKeys::JwksUrl(url)
            }
            _ => {
                return Err(
                    "--auth jwt needs exactly one of --jwt-secret-file, --jwt-jwks-file and \
                     --jwt-jwks-url"
                        .into(),
                );
            }
        };
        let jwks_refresh = match self.jwt_jwks_refresh {
            Some(refresh) => refresh,
            None => file
                .jwt_jwks_refresh
                .as_deref()
                .map(parse_duration)
                .transpose()?
                .unwrap_or(DEFAULT_JWKS_REFRESH),
        };
        Ok(AuthSettings {
            api_keys,
            jwt: Some(JwtSettings {
                keys,
                issuer: self.jwt_issuer.or(file.jwt_issuer),
                audience: self.jwt_audience.or(file.jwt_audience),
                tenant_claim: self
                    .jwt_tenant_claim
                    .or(file.jwt_tenant_claim)
                    .unwrap_or_else(|| "tenant_id".into()),
                role_claim: self
                    .jwt_role_claim
                    .or(file.jwt_role_claim)
                    .unwrap_or_else(|| "role".into()),
                jwks_refresh,
            }),
            allow_unauthenticated: self.allow_unauthenticated
                || file.allow_unauthenticated.unwrap_or(false),
        })
    }
}

/// `none`, `api-key`, `jwt` or both, comma-separated: (API keys, JWT).
fn parse_mode(raw: &str) -> Result<(bool, bool), String> {
    let (mut api_keys, mut jwt) = (false, false);
    for part in raw.split(',').map(str::trim) {
        match part {
            "none" if raw.trim() == "none" => {}
            "api-key" => api_keys = true,
            "jwt" => jwt = true,
            _ => {
                return Err(format!(
                    "invalid --auth {raw:?}: use none, api-key, jwt or api-key,jwt"
                ));
            }
        }
    }
    Ok((api_keys, jwt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_combine_and_nonsense_is_refused() {
        assert_eq!(parse_mode("none"), Ok((false, false)));
        assert_eq!(parse_mode("api-key,jwt"), Ok((true, true)));
        assert_eq!(parse_mode("jwt"), Ok((false, true)));
        assert!(parse_mode("none,jwt").is_err());
        assert!(parse_mode("password").is_err());
    }

    #[test]
    fn jwt_needs_exactly_one_key_source() {
        let args = |secret: bool, url: bool| AuthArgs {
            auth: Some("jwt".into()),
            jwt_secret_file: secret.then(|| "/s".into()),
            jwt_jwks_url: url.then(|| "http://127.0.0.1:1/jwks".into()),
            ..AuthArgs::default()
        };
        assert!(args(false, false).resolve(AuthFile::default()).is_err());
        assert!(args(true, true).resolve(AuthFile::default()).is_err());
        let settings = args(false, true).resolve(AuthFile::default()).unwrap();
        let jwt = settings.jwt.unwrap();
        assert_eq!(jwt.tenant_claim, "tenant_id");
        assert_eq!(jwt.jwks_refresh, DEFAULT_JWKS_REFRESH);
    }

    #[test]
    fn the_config_file_sets_auth_and_flags_override_it() {
        use crate::config::{ServeArgs, ServeConfig};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "database = \"memory://\"\nauth = \"jwt\"\njwt_secret_file = \"/run/secret\"\n\
             jwt_audience = \"checkpointd\"\njwt_jwks_refresh = \"1m\"\n",
        )
        .unwrap();
        let resolve = |auth: AuthArgs| {
            ServeConfig::resolve(ServeArgs {
                config: Some(path.clone()),
                auth: Box::new(auth),
                ..ServeArgs::default()
            })
            .map(|config| config.server.auth)
        };
        let from_file = resolve(AuthArgs::default()).unwrap();
        let jwt = from_file.jwt.unwrap();
        assert_eq!(jwt.keys, JwtKeys::SecretFile("/run/secret".into()));
        assert_eq!(jwt.audience.as_deref(), Some("checkpointd"));
        assert_eq!(jwt.jwks_refresh, Duration::from_secs(60));
        assert!(!from_file.api_keys);
        let both = resolve(AuthArgs {
            auth: Some("api-key,jwt".into()),
            jwt_audience: Some("other".into()),
            ..AuthArgs::default()
        })
        .unwrap();
        assert!(both.api_keys);
        assert_eq!(both.jwt.unwrap().audience.as_deref(), Some("other"));
    }

    #[test]
    fn jwt_flags_without_jwt_mode_are_refused() {
        let args = AuthArgs {
            auth: Some("api-key".into()),
            jwt_secret_file: Some("/s".into()),
            ..AuthArgs::default()
        };
        assert!(args.resolve(AuthFile::default()).is_err());
    }
}
