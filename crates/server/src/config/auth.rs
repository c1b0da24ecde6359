//! Authentication's settings: the `--auth` mode, where JWT keys come from and which claims
//! name the tenant and the role, resolved into [`AuthSettings`].

use std::path::PathBuf;
use std::time::Duration;

use tonic::codegen::http::Uri;

use super::declare::{declared_defaults, settings};
use super::parse_duration;

settings! {
    /// Authentication flags; each also reads a `CHECKPOINTD_*` variable.
    pub struct AuthArgs => AuthValues {
        /// How callers authenticate: `none`, `api-key`, `jwt` or `api-key,jwt` (`none` is
        /// allowed only on a loopback --listen address). JWT `exp` and `nbf` are honoured with
        /// 60 s of clock leeway; an unknown API key id is remembered for 5 s.
        #[arg(long, env = "CHECKPOINTD_AUTH")]
        pub auth: String = "none";
        /// Serve without authentication on a non-loopback address: any client reaching it may
        /// read and change every tenant's data.
        #[arg(
            long,
            env = "CHECKPOINTD_ALLOW_UNAUTHENTICATED",
            action = clap::ArgAction::SetTrue
        )]
        pub allow_unauthenticated: bool = switch;
        /// File holding the HS256 shared secret JWTs are signed with (at least 32 bytes).
        #[arg(long, env = "CHECKPOINTD_JWT_SECRET_FILE")]
        pub jwt_secret_file: PathBuf = unset;
        /// JWKS file with the public keys JWTs are signed with; re-read every
        /// --jwt-jwks-refresh.
        #[arg(long, env = "CHECKPOINTD_JWT_JWKS_FILE")]
        pub jwt_jwks_file: PathBuf = unset;
        /// http:// or https:// URL of the JWKS (extra CAs: --outbound-ca-file); refetched
        /// every --jwt-jwks-refresh and on an unknown `kid`.
        #[arg(long, env = "CHECKPOINTD_JWT_JWKS_URL")]
        pub jwt_jwks_url: String = unset;
        /// Required `iss` claim.
        #[arg(long, env = "CHECKPOINTD_JWT_ISSUER")]
        pub jwt_issuer: String = unset;
        /// Required `aud` claim.
        #[arg(long, env = "CHECKPOINTD_JWT_AUDIENCE")]
        pub jwt_audience: String = unset;
        /// Claim naming the caller's tenant.
        #[arg(long, env = "CHECKPOINTD_JWT_TENANT_CLAIM")]
        pub jwt_tenant_claim: String = "tenant_id";
        /// Claim naming the caller's role: agent, operator or admin.
        #[arg(long, env = "CHECKPOINTD_JWT_ROLE_CLAIM")]
        pub jwt_role_claim: String = "role";
        /// How old a JWKS may get before it is read again.
        #[arg(long, env = "CHECKPOINTD_JWT_JWKS_REFRESH")]
        pub jwt_jwks_refresh: Duration = "5m", parsed by parse_duration;
        /// How long an API key read from the database admits its calls from memory before it
        /// is read again: the longest a revoked key may still work on a server that missed
        /// the revocation's notification (on SQLite, one made by another process). 0 reads
        /// the key on every call.
        #[arg(long, env = "CHECKPOINTD_API_KEY_CACHE_TTL")]
        pub api_key_cache_ttl: Duration = "5s", parsed by parse_duration;
    }
}

/// How callers prove who they are; `serve --auth`. The default is auth `none` with every
/// other setting at its declared default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthSettings {
    /// `api-key`: bearer tokens may be API keys from the database.
    pub api_keys: bool,
    /// How long a key read from the database is admitted from memory.
    pub api_key_cache_ttl: Duration,
    /// `jwt`: bearer tokens may be JWTs, verified as configured here.
    pub jwt: Option<JwtSettings>,
    /// Serve without authentication on a non-loopback address anyway.
    pub allow_unauthenticated: bool,
}

/// Where the verification keys come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JwtKeys {
    /// A file holding the HS256 shared secret (surrounding whitespace ignored).
    SecretFile(PathBuf),
    /// A JWKS document on disk, re-read on refresh.
    JwksFile(PathBuf),
    /// A JWKS document served over `http://` or `https://`, refetched on refresh.
    JwksUrl(String),
}

/// How JWTs are verified; each field is a `serve` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JwtSettings {
    pub keys: JwtKeys,
    /// Required `iss`, when set.
    pub issuer: Option<String>,
    /// Required `aud`, when set.
    pub audience: Option<String>,
    /// The claim naming the tenant; absent or `*` means every tenant (admins only).
    pub tenant_claim: String,
    /// The claim naming the role: `agent`, `operator` or `admin`.
    pub role_claim: String,
    /// How old a JWKS may get before it is read again.
    pub jwks_refresh: Duration,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self::from_values(declared_defaults::<AuthArgs>()).expect("the declared defaults are valid")
    }
}

impl AuthSettings {
    /// Auth `none`: every call is allowed, the tenant comes from `x-tenant-id`.
    pub fn is_none(&self) -> bool {
        !self.api_keys && self.jwt.is_none()
    }

    /// Refuses to serve every tenant's data to anyone who can reach `listen`.
    pub fn check_listener(&self, listen: std::net::SocketAddr) -> Result<(), String> {
        if self.is_none() && !listen.ip().is_loopback() && !self.allow_unauthenticated {
            return Err(format!(
                "refusing to listen on {listen} without authentication: any client that can \
                 reach it could read and change every tenant's data. Set --auth api-key and/or \
                 jwt (CHECKPOINTD_AUTH), listen on a loopback address, or pass \
                 --allow-unauthenticated (CHECKPOINTD_ALLOW_UNAUTHENTICATED=true) to run \
                 insecurely on purpose"
            ));
        }
        Ok(())
    }

    /// The authentication these values describe, its mode and key source checked.
    pub(super) fn from_values(values: AuthValues) -> Result<Self, String> {
        let mode = values.auth;
        let (api_keys, jwt) = parse_mode(&mode)?;
        let allow_unauthenticated = values.allow_unauthenticated;
        let api_key_cache_ttl = values.api_key_cache_ttl;
        let (secret, jwks_file, jwks_url) = (
            values.jwt_secret_file,
            values.jwt_jwks_file,
            values.jwt_jwks_url,
        );
        let sources = [secret.is_some(), jwks_file.is_some(), jwks_url.is_some()];
        let given = sources.iter().filter(|given| **given).count();
        if !jwt {
            if given > 0 {
                return Err(format!(
                    "--jwt-secret-file, --jwt-jwks-file or --jwt-jwks-url given, but --auth \
                     {mode:?} does not include jwt"
                ));
            }
            return Ok(Self {
                api_keys,
                api_key_cache_ttl,
                jwt: None,
                allow_unauthenticated,
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
        Ok(Self {
            api_keys,
            api_key_cache_ttl,
            jwt: Some(JwtSettings {
                keys,
                issuer: values.jwt_issuer,
                audience: values.jwt_audience,
                tenant_claim: values.jwt_tenant_claim,
                role_claim: values.jwt_role_claim,
                jwks_refresh: values.jwt_jwks_refresh,
            }),
            allow_unauthenticated,
        })
    }
}

/// `none`, `api-key`, `jwt` or both, comma-separated: (API keys, JWT).
pub(super) fn parse_mode(raw: &str) -> Result<(bool, bool), String> {
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

/// Checks that a `--jwt-jwks-url` is one the JWKS fetcher can reach.
pub fn check_url(url: &str) -> Result<(), String> {
    let uri: Uri = url
        .parse()
        .map_err(|error| format!("invalid --jwt-jwks-url {url:?}: {error}"))?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some() => Ok(()),
        _ => Err(format!(
            "--jwt-jwks-url {url:?}: use an http:// or https:// URL, or --jwt-jwks-file"
        )),
    }
}
