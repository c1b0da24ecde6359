//! Sign-in through the organisation's OpenID Connect provider: the authorization code flow
//! with PKCE (S256), its `state` and `nonce` checked, the ID token verified against the
//! provider's JWKS (signature, issuer, audience, expiry) by the `openidconnect` crate, all its
//! HTTP over the server's outbound client ([`crate::outbound`]). The role and tenant come
//! from the ID token's claims by the gRPC port's own mapping
//! ([`crate::grpc::auth::jwt::identity_from_claims`]); the result is the same session an API
//! key's sign-in makes.
//!
//! Cookies: the session cookie is `SameSite=Strict`, which a browser does not send on the
//! provider's redirect back (a cross-site navigation). So the sign-in in flight (PKCE
//! verifier, nonce, expiry) is kept on the server, keyed by its `state`, and the browser that
//! started it holds the `state` in a separate `SameSite=Lax`, `HttpOnly` cookie, which a
//! top-level cross-site GET does carry; the callback must present both. The callback then
//! answers 200 with the session cookie and a same-site refresh to the inbox: a navigation the
//! console's own page starts, on which the Strict cookie is sent.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::response::{Html, IntoResponse, Redirect, Response};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreJwsSigningAlgorithm, CoreProviderMetadata,
};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet, EndpointNotSet,
    EndpointSet, HttpRequest, HttpResponse, IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, Scope, TokenResponse,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::Shared;
use super::gate::{Query, context_for, sign_in_form, start_session};
use super::html::page;
use super::session::{SignedInWith, make_room};
use crate::config::OidcSettings;
use crate::grpc::auth::jwt::identity_from_claims;
use crate::outbound::{OutboundHttp, describe};
use checkpointd_core::domain::Role;

/// The cookie naming the sign-in this browser started (its `state`).
pub const LOGIN_COOKIE: &str = "checkpointd_console_login";

/// How long a person may take at the provider before the sign-in must start again.
pub const PENDING_LOGIN_TTL: Duration = Duration::from_secs(10 * 60);

/// Sign-ins in flight at most; beyond it the oldest is dropped, so starting sign-ins cannot
/// grow the server's memory without bound.
const MAX_PENDING: usize = 10_000;

/// Largest answer read from the provider (discovery, JWKS, token).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Longest one call to the provider may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Signature algorithms an ID token may use: public-key ones only, as the gRPC port's JWKS
/// mode (an HMAC over the client secret is not accepted).
const ALLOWED_ALGS: [CoreJwsSigningAlgorithm; 9] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// A client built from the provider's discovery document: authorization URL set, token and
/// user-info URLs as discovered.
type OidcClient = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// See the module documentation.
pub struct OidcSignIn {
    client: OidcClient,
    http: OutboundHttp,
    settings: OidcSettings,
    pending: PendingLogins,
}

impl OidcSignIn {
    /// Discovers the provider (its metadata and JWKS) and reads the client secret; a provider
    /// that cannot be reached or a bad setting stops startup.
    pub async fn discover(settings: OidcSettings, http: OutboundHttp) -> Result<Self, String> {
        let issuer = IssuerUrl::new(settings.issuer.clone())
            .map_err(|error| format!("invalid --console-oidc-issuer: {error}"))?;
        let metadata =
            CoreProviderMetadata::discover_async(issuer, &|request| call(http.clone(), request))
                .await
                .map_err(|error| {
                    format!(
                        "cannot discover the console's OpenID provider {}: {}",
                        settings.issuer,
                        describe(&error)
                    )
                })?;
        let secret = match &settings.client_secret_file {
            None => None,
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|error| {
                    format!(
                        "cannot read --console-oidc-client-secret-file {}: {error}",
                        path.display()
                    )
                })?;
                Some(ClientSecret::new(text.trim().to_owned()))
            }
        };
        let redirect = RedirectUrl::new(settings.redirect_url.clone())
            .map_err(|error| format!("invalid --console-public-url: {error}"))?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(settings.client_id.clone()),
            secret,
        )
        .set_redirect_uri(redirect);
        Ok(Self {
            client,
            http,
            settings,
            pending: PendingLogins::default(),
        })
    }

    /// The provider's name on the sign-in page.
    pub fn provider_name(&self) -> &str {
        &self.settings.provider_name
    }

    /// The verified ID token's claims, from the provider's answer to `code`.
    async fn claims(&self, code: String, pending: Pending) -> Result<Value, String> {
        let http = |request| call(self.http.clone(), request);
        let answer = self
            .client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|error| format!("the provider has no token endpoint: {error}"))?
            .set_pkce_verifier(pending.verifier)
            .request_async(&http)
            .await
            .map_err(|error| format!("the provider refused the code: {}", describe(&error)))?;
        let id_token = answer
            .id_token()
            .ok_or("the provider's answer has no ID token")?;
        let verifier = self
            .client
            .id_token_verifier()
            .set_allowed_algs(ALLOWED_ALGS);
        id_token
            .claims(&verifier, &pending.nonce)
            .map_err(|error| format!("the ID token does not verify: {}", describe(&error)))?;
        // Verified above; read again as plain JSON so the configured claims are found by the
        // same code that reads a gRPC JWT's.
        let token = id_token.to_string();
        let payload = token.split('.').nth(1).ok_or("the ID token is not a JWS")?;
        use base64::Engine as _;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|error| format!("the ID token's payload: {error}"))?;
        serde_json::from_slice(&json).map_err(|error| format!("the ID token's claims: {error}"))
    }
}

/// One provider call over the outbound client: at most [`MAX_ANSWER_BYTES`] read back.
async fn call(http: OutboundHttp, request: HttpRequest) -> Result<HttpResponse, CallError> {
    let request =
        reqwest::Request::try_from(request).map_err(|error| CallError(describe(&error)))?;
    let mut response = tokio::time::timeout(CALL_TIMEOUT, http.execute(request))
        .await
        .map_err(|_| CallError(format!("no answer within {CALL_TIMEOUT:?}")))?
        .map_err(|error| CallError(describe(&error)))?;
    let mut answer = HttpResponse::new(Vec::new());
    *answer.status_mut() = response.status();
    *answer.headers_mut() = response.headers().clone();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| CallError(describe(&error)))?
    {
        if answer.body().len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(CallError(format!(
                "an answer over {MAX_ANSWER_BYTES} bytes"
            )));
        }
        answer.body_mut().extend_from_slice(&chunk);
    }
    Ok(answer)
}

/// Why a call to the provider failed, with its causes.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CallError(String);

/// A sign-in in flight: what the callback needs to finish it.
pub struct Pending {
    verifier: PkceCodeVerifier,
    nonce: Nonce,
    expires_at: SystemTime,
}

/// Why a callback cannot finish a sign-in; said to the person, who starts again.
#[derive(Debug, PartialEq, Eq)]
pub enum CallbackRefused {
    /// The answer names no `state`.
    NoState,
    /// The browser holds no sign-in cookie: it did not start this sign-in.
    NotStartedHere,
    /// The `state` is not the one this browser's sign-in cookie names.
    StateMismatch,
    /// No sign-in (no PKCE verifier) is kept for this `state`: already used, or unknown.
    NoPendingLogin,
    /// The sign-in started longer ago than [`PENDING_LOGIN_TTL`].
    Expired,
}

impl CallbackRefused {
    fn text(&self) -> &'static str {
        match self {
            Self::NoState => "the provider's answer names no sign-in",
            Self::NotStartedHere | Self::StateMismatch => {
                "this sign-in was not started in this browser"
            }
            Self::NoPendingLogin => "this sign-in is unknown or was already used",
            Self::Expired => "this sign-in took too long",
        }
    }
}

/// The sign-ins in flight, keyed by the SHA-256 of their `state`; each is taken once.
#[derive(Default)]
pub struct PendingLogins {
    logins: Mutex<HashMap<[u8; 32], Pending>>,
}

impl PendingLogins {
    fn insert(&self, state: &str, pending: Pending, now: SystemTime) {
        let mut logins = self.lock();
        make_room(&mut logins, MAX_PENDING, now, |kept| kept.expires_at);
        logins.insert(digest(state), pending);
    }

    /// The sign-in the callback's `state` names, if the browser's cookie names the same one
    /// and it has not expired; taken, so a `state` finishes at most one sign-in.
    pub fn take(
        &self,
        cookie_state: Option<&str>,
        answer_state: Option<&str>,
        now: SystemTime,
    ) -> Result<Pending, CallbackRefused> {
        let state = answer_state
            .filter(|state| !state.is_empty())
            .ok_or(CallbackRefused::NoState)?;
        let cookie_state = cookie_state.ok_or(CallbackRefused::NotStartedHere)?;
        if digest(cookie_state) != digest(state) {
            return Err(CallbackRefused::StateMismatch);
        }
        let pending = self
            .lock()
            .remove(&digest(state))
            .ok_or(CallbackRefused::NoPendingLogin)?;
        if pending.expires_at <= now {
            return Err(CallbackRefused::Expired);
        }
        Ok(pending)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Pending>> {
        self.logins
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// `GET /sign-in/oidc`: starts a sign-in and sends the browser to the provider.
pub async fn start(State(console): State<Shared>) -> Response {
    let Some(oidc) = &console.oidc else {
        return super::pages::not_found().await;
    };
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = oidc.client.authorize_url(
        CoreAuthenticationFlow::AuthorizationCode,
        CsrfToken::new_random,
        Nonce::new_random,
    );
    for scope in &oidc.settings.scopes {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
    let now = SystemTime::now();
    let pending = Pending {
        verifier,
        nonce,
        expires_at: now + PENDING_LOGIN_TTL,
    };
    oidc.pending.insert(state.secret(), pending, now);
    let mut response = Redirect::to(url.as_str()).into_response();
    let cookie = login_cookie(state.secret(), PENDING_LOGIN_TTL, console.secure);
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `GET /sign-in/oidc/callback`: finishes the sign-in the provider sends the browser back
/// with, or says why not.
pub async fn callback(
    State(console): State<Shared>,
    headers: HeaderMap,
    Query(query): Query,
) -> Response {
    let Some(oidc) = &console.oidc else {
        return super::pages::not_found().await;
    };
    let refused = |status: StatusCode, why: &str| {
        let mut response = sign_in_form(&console, status, Some(why));
        forget_login(&mut response, console.secure);
        response
    };
    if let Some(error) = query.get("error") {
        let detail = query.get("error_description").unwrap_or(error);
        return refused(
            StatusCode::UNAUTHORIZED,
            &format!("{} answered: {detail}", oidc.provider_name()),
        );
    }
    let cookie_state = headers
        .get(header::COOKIE)
        .and_then(|value| value.to_str().ok())
        .and_then(state_from_cookies);
    let state = query.get("state").map(String::as_str);
    let pending = match oidc.pending.take(cookie_state, state, SystemTime::now()) {
        Ok(pending) => pending,
        Err(why) => {
            return refused(
                StatusCode::BAD_REQUEST,
                &format!("{}: sign in again", why.text()),
            );
        }
    };
    let Some(code) = query.get("code").filter(|code| !code.is_empty()) else {
        return refused(StatusCode::BAD_REQUEST, "the provider sent no code");
    };
    let claims = match oidc.claims(code.clone(), pending).await {
        Ok(claims) => claims,
        Err(why) => {
            tracing::warn!(reason = %why, "console OpenID sign-in refused");
            return refused(
                StatusCode::UNAUTHORIZED,
                &format!("{} did not sign you in", oidc.provider_name()),
            );
        }
    };
    let settings = &oidc.settings;
    let identity = match identity_from_claims(&claims, &settings.role_claim, &settings.tenant_claim)
    {
        Ok(identity) if identity.role >= Role::Operator => identity,
        Ok(_) | Err(_) => {
            return refused(
                StatusCode::FORBIDDEN,
                "your account has no operator or admin role for the console",
            );
        }
    };
    let with = SignedInWith::OpenIdConnect {
        subject: identity.subject.clone(),
    };
    let context = match context_for(identity, None) {
        Ok(context) => context,
        Err(why) => return refused(StatusCode::FORBIDDEN, &why),
    };
    let session_cookie = match start_session(&console, context, with) {
        Ok(cookie) => cookie,
        Err(failed) => return *failed,
    };
    // A 200 page, not a redirect: the browser arrived here from the provider (cross-site), and
    // a redirect would continue that navigation, on which the Strict cookie is withheld.
    let body = r#"<p>Signed in. <a href="/inbox">Continue to the inbox</a>.</p>"#;
    let mut response = Html(page("Signed in", None, "", body)).into_response();
    forget_login(&mut response, console.secure);
    let headers = response.headers_mut();
    headers.insert("refresh", HeaderValue::from_static("0; url=/inbox"));
    if let Ok(cookie) = HeaderValue::from_str(&session_cookie) {
        headers.append(header::SET_COOKIE, cookie);
    }
    response
}

/// The `Set-Cookie` value holding a sign-in's `state` while the person is at the provider:
/// `SameSite=Lax`, so the provider's redirect back carries it; only on the callback's path.
fn login_cookie(state: &str, ttl: Duration, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{LOGIN_COOKIE}={state}; Path=/sign-in/oidc; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        ttl.as_secs()
    )
}

fn forget_login(response: &mut Response, secure: bool) {
    if let Ok(cookie) = HeaderValue::from_str(&login_cookie("", Duration::ZERO, secure)) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
}

/// The sign-in `state` a `Cookie` header carries, if any.
fn state_from_cookies(header: &str) -> Option<&str> {
    header.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name == LOGIN_COOKIE && !value.is_empty()).then_some(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(expires_at: SystemTime) -> Pending {
        Pending {
            verifier: PkceCodeVerifier::new("v".repeat(43)),
            nonce: Nonce::new("n".into()),
            expires_at,
        }
    }

    fn started(now: SystemTime) -> PendingLogins {
        let logins = PendingLogins::default();
        logins.insert("state-1", pending(now + PENDING_LOGIN_TTL), now);
        logins
    }

    #[test]
    fn a_callback_whose_state_is_not_the_browsers_own_is_refused() {
        let now = SystemTime::now();
        let logins = started(now);
        let mismatch = logins.take(Some("state-2"), Some("state-1"), now);
        assert_eq!(mismatch.err(), Some(CallbackRefused::StateMismatch));
        let no_cookie = logins.take(None, Some("state-1"), now);
        assert_eq!(no_cookie.err(), Some(CallbackRefused::NotStartedHere));
        let no_state = logins.take(Some("state-1"), None, now);
        assert_eq!(no_state.err(), Some(CallbackRefused::NoState));
        // None of the refusals used the sign-in up.
        assert!(logins.take(Some("state-1"), Some("state-1"), now).is_ok());
    }

    #[test]
    fn a_callback_without_a_kept_pkce_verifier_is_refused_and_a_state_finishes_once() {
        let now = SystemTime::now();
        let logins = started(now);
        let unknown = logins.take(Some("forged"), Some("forged"), now);
        assert_eq!(unknown.err(), Some(CallbackRefused::NoPendingLogin));
        assert!(logins.take(Some("state-1"), Some("state-1"), now).is_ok());
        let replayed = logins.take(Some("state-1"), Some("state-1"), now);
        assert_eq!(replayed.err(), Some(CallbackRefused::NoPendingLogin));
    }

    #[test]
    fn a_pending_login_older_than_its_life_is_refused() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let logins = started(start);
        let late = logins.take(Some("state-1"), Some("state-1"), start + PENDING_LOGIN_TTL);
        assert_eq!(late.err(), Some(CallbackRefused::Expired));
    }

    #[test]
    fn the_login_cookie_is_lax_http_only_and_only_on_the_sign_in_path() {
        let cookie = login_cookie("abc", PENDING_LOGIN_TTL, true);
        for part in [
            "SameSite=Lax",
            "HttpOnly",
            "Path=/sign-in/oidc",
            "Secure",
            "Max-Age=600",
        ] {
            assert!(cookie.contains(part), "{cookie}");
        }
        let header = format!("checkpointd_console=x; {LOGIN_COOKIE}=abc");
        assert_eq!(state_from_cookies(&header), Some("abc"));
        assert_eq!(state_from_cookies("checkpointd_console=x"), None);
    }
}
