//! JWT bearer tokens: verified against a shared HS256 secret or a JWKS (a file re-read, or a
//! URL refetched, every `jwks_refresh` and on an unknown `kid`), with issuer, audience, expiry
//! and not-before checked; the tenant and role come from configurable claims. A token that
//! verified is remembered for a while ([`JwtCache`] states the rules), so one presented again
//! costs no signature check.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::Value;
use tokio::sync::RwLock;

use super::jwks_fetch;
use super::jwt_cache::{JwtCache, Verified};
use super::setup_error::AuthSetupError;
pub use crate::config::{JwtKeys, JwtSettings};
use crate::outbound::OutboundHttp;
use checkpointd_core::domain::{Identity, Role, Tenant, TenantScope};

/// A token that does not verify; why is logged at debug level, never sent.
#[derive(Debug)]
pub struct Rejected(pub String);

/// Clock skew allowed between the token's issuer and this server, for `exp` and `nbf` alike: a
/// token is accepted until `exp` + this, and from `nbf` - this.
pub const CLOCK_LEEWAY: Duration = Duration::from_secs(60);

/// Unknown `kid`s refetch the JWKS at most this often, so a stream of made-up key ids cannot
/// turn the server into a load generator against the identity provider.
const MIN_REFETCH: Duration = Duration::from_secs(1);

struct Jwks {
    set: JwkSet,
    fetched_at: Instant,
    /// Counts the successful reads, the first being 1.
    read: u64,
}

/// See the module documentation.
pub struct JwtVerifier {
    settings: JwtSettings,
    /// The shared secret, in secret mode.
    secret: Option<DecodingKey>,
    /// The current JWKS, in JWKS mode.
    jwks: RwLock<Option<Jwks>>,
    /// Tokens that verified.
    cache: JwtCache,
    /// Fetches a JWKS URL.
    http: OutboundHttp,
}

impl JwtVerifier {
    /// Reads the secret or the JWKS once, so a bad file or URL stops startup.
    pub async fn new(settings: JwtSettings, http: OutboundHttp) -> Result<Self, AuthSetupError> {
        let verifier = match &settings.keys {
            JwtKeys::SecretFile(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| {
                    AuthSetupError::ReadJwtSecret {
                        path: path.clone(),
                        source,
                    }
                })?;
                let secret = text.trim();
                if secret.len() < 32 {
                    return Err(AuthSetupError::ShortJwtSecret);
                }
                Self {
                    secret: Some(DecodingKey::from_secret(secret.as_bytes())),
                    jwks: RwLock::new(None),
                    cache: JwtCache::default(),
                    settings,
                    http,
                }
            }
            JwtKeys::JwksFile(_) | JwtKeys::JwksUrl(_) => {
                let set = load(&settings.keys, &http)
                    .await
                    .map_err(AuthSetupError::Jwks)?;
                let fetched_at = Instant::now();
                let cache = JwtCache::default();
                cache.jwks_read(1, fetched_at + settings.jwks_refresh, |_| true);
                Self {
                    secret: None,
                    jwks: RwLock::new(Some(Jwks {
                        set,
                        fetched_at,
                        read: 1,
                    })),
                    cache,
                    settings,
                    http,
                }
            }
        };
        Ok(verifier)
    }

    /// The identity `token` proves: remembered, or verified now.
    pub async fn verify(&self, token: &str) -> Result<Identity, Rejected> {
        let now = Instant::now();
        if let Some(identity) = self.cache.get(token, now) {
            return Ok(identity);
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|error| Rejected(format!("bad header: {error}")))?;
        let (claims, jwks_read) = match &self.secret {
            Some(secret) => {
                if header.alg != Algorithm::HS256 {
                    return Err(Rejected(format!("{:?} with a shared secret", header.alg)));
                }
                (self.decode(token, secret, header.alg)?, 0)
            }
            None => {
                if header.alg.family() == AlgorithmFamily::Hmac {
                    return Err(Rejected("an HMAC token against a JWKS".into()));
                }
                let (key, read) = self.key_for(header.kid.as_deref(), header.alg).await?;
                (self.decode(token, &key, header.alg)?, read)
            }
        };
        let identity = identity_from_claims(
            &claims,
            &self.settings.role_claim,
            &self.settings.tenant_claim,
        )?;
        // `exp` is required and was checked, so it is a number of seconds here.
        let expires = claims
            .get("exp")
            .and_then(Value::as_f64)
            .and_then(|exp| Duration::try_from_secs_f64(exp).ok())
            .map_or(UNIX_EPOCH, |exp| UNIX_EPOCH + exp + CLOCK_LEEWAY);
        let verified = Verified {
            identity: &identity,
            kid: header.kid.as_deref(),
            valid_until: expires,
            jwks_read,
        };
        self.cache.remember(token, verified, now, SystemTime::now());
        Ok(identity)
    }

    fn decode(&self, token: &str, key: &DecodingKey, alg: Algorithm) -> Result<Value, Rejected> {
        let mut validation = Validation::new(alg);
        validation.leeway = CLOCK_LEEWAY.as_secs();
        // Off by default in jsonwebtoken; a token not yet valid is refused like an expired one.
        validation.validate_nbf = true;
        let mut required = vec!["exp", "sub"];
        if let Some(issuer) = &self.settings.issuer {
            validation.set_issuer(&[issuer]);
            required.push("iss");
        }
        match &self.settings.audience {
            Some(audience) => {
                validation.set_audience(&[audience]);
                required.push("aud");
            }
            None => validation.validate_aud = false,
        }
        validation.set_required_spec_claims(&required);
        jsonwebtoken::decode::<Value>(token, key, &validation)
            .map(|data| data.claims)
            .map_err(|error| Rejected(error.to_string()))
    }

    /// The key a JWKS holds for `kid`, reading the JWKS again when it is due or lacks the key;
    /// with the number of the read that held it.
    async fn key_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<(DecodingKey, u64), Rejected> {
        let due = {
            let jwks = self.jwks.read().await;
            match jwks.as_ref() {
                Some(jwks) => jwks.fetched_at.elapsed() >= self.settings.jwks_refresh,
                None => true,
            }
        };
        if due {
            self.refresh(Duration::ZERO).await;
        }
        if let Some(key) = self.find(kid, alg).await? {
            return Ok(key);
        }
        self.refresh(MIN_REFETCH).await;
        self.find(kid, alg)
            .await?
            .ok_or_else(|| Rejected(format!("no key {kid:?} in the JWKS")))
    }

    async fn find(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Option<(DecodingKey, u64)>, Rejected> {
        let jwks = self.jwks.read().await;
        let Some(jwks) = jwks.as_ref() else {
            return Ok(None);
        };
        let jwk = match kid {
            Some(kid) => jwks.set.find(kid),
            // Without a kid only a one-key set is unambiguous.
            None if jwks.set.keys.len() == 1 => jwks.set.keys.first(),
            None => None,
        };
        let Some(jwk) = jwk else { return Ok(None) };
        // A key that names its algorithm is used with that one only.
        if let Some(declared) = jwk.common.key_algorithm
            && declared.to_string().parse::<Algorithm>().ok() != Some(alg)
        {
            return Err(Rejected(format!("{alg:?} token for a {declared} key")));
        }
        DecodingKey::from_jwk(jwk)
            .map(|key| Some((key, jwks.read)))
            .map_err(|error| Rejected(format!("unusable JWK: {error}")))
    }

    /// Reads the JWKS again unless it was read less than `unless_within` ago; a failed read
    /// keeps the keys already known.
    async fn refresh(&self, unless_within: Duration) {
        let mut jwks = self.jwks.write().await;
        if let Some(current) = jwks.as_ref() {
            // Another call may have refreshed while this one waited for the lock.
            if current.fetched_at.elapsed() < unless_within.max(Duration::from_millis(1)) {
                return;
            }
        }
        match load(&self.settings.keys, &self.http).await {
            Ok(set) => {
                let fetched_at = Instant::now();
                let read = jwks.as_ref().map_or(0, |old| old.read) + 1;
                // Under the write lock, so no token is verified against either set meanwhile.
                self.cache
                    .jwks_read(read, fetched_at + self.settings.jwks_refresh, |kid| {
                        jwks.as_ref()
                            .is_some_and(|old| same_key(&old.set, &set, kid))
                    });
                *jwks = Some(Jwks {
                    set,
                    fetched_at,
                    read,
                });
            }
            Err(error) => {
                tracing::warn!(%error, "cannot refresh the JWKS; keeping the keys already known");
                if let Some(current) = jwks.as_mut() {
                    // Wait a full period before trying again, instead of on every call.
                    current.fetched_at = Instant::now();
                    self.cache
                        .jwks_kept(current.fetched_at + self.settings.jwks_refresh);
                }
            }
        }
    }
}

/// The identity a verified token's claims give: `sub` the subject, the role and the tenant from
/// the configured claims (`--jwt-role-claim`, `--jwt-tenant-claim`). The one mapping of claims
/// to an identity, shared by the gRPC port's JWTs and the console's OpenID Connect ID tokens.
pub fn identity_from_claims(
    claims: &Value,
    role_claim: &str,
    tenant_claim: &str,
) -> Result<Identity, Rejected> {
    let text = |claim: &str| claims.get(claim).and_then(Value::as_str);
    let subject = text("sub")
        .filter(|sub| !sub.is_empty())
        .ok_or_else(|| Rejected("no sub".into()))?;
    let role: Role = text(role_claim)
        .ok_or_else(|| Rejected(format!("no {role_claim} claim")))?
        .parse()
        .map_err(|_| Rejected("unknown role".into()))?;
    let tenant = match text(tenant_claim) {
        None | Some("*") if role == Role::Admin => TenantScope::All,
        None | Some("*") => return Err(Rejected("a non-admin token for all tenants".into())),
        Some(name) => TenantScope::One(
            Tenant::parse(name).map_err(|_| Rejected("invalid tenant claim".into()))?,
        ),
    };
    Ok(Identity {
        subject: subject.to_owned(),
        tenant,
        role,
        authenticated: true,
    })
}

/// Whether `new` holds the key a token with this `kid` was verified with under `old`, as it
/// was: the same key under the `kid`, or, for a token without one, the same single key.
fn same_key(old: &JwkSet, new: &JwkSet, kid: Option<&str>) -> bool {
    match kid {
        Some(kid) => new.find(kid).is_some() && new.find(kid) == old.find(kid),
        None => old.keys.len() == 1 && old.keys == new.keys,
    }
}

/// Reads a JWKS from its file or URL.
async fn load(keys: &JwtKeys, http: &OutboundHttp) -> Result<JwkSet, String> {
    let body = match keys {
        JwtKeys::JwksFile(path) => tokio::fs::read(path)
            .await
            .map_err(|error| format!("cannot read JWKS file {}: {error}", path.display()))?,
        JwtKeys::JwksUrl(url) => jwks_fetch::get(http, url).await?,
        JwtKeys::SecretFile(_) => return Err("a secret is not a JWKS".into()),
    };
    serde_json::from_slice(&body).map_err(|error| format!("invalid JWKS: {error}"))
}

/// Whether a bearer token has the shape of a JWT (three base64url parts), as opposed to an
/// API key.
pub fn looks_like_jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}
