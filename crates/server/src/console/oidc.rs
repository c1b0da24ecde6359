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

mod pending;

use std::time::{Duration, Instant, SystemTime};

use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::response::{Html, IntoResponse, Redirect, Response};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreIdTokenVerifier, CoreJsonWebKeySet,
    CoreJwsSigningAlgorithm, CoreProviderMetadata,
};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, IssuerUrl,
    JsonWebKeySetUrl, Nonce, PkceCodeChallenge, RedirectUrl, Scope, SignatureVerificationError,
    TokenResponse,
};
use serde_json::Value;
use tokio::sync::RwLock;

use super::Shared;
use super::gate::{Query, context_for, sign_in_form, start_session};
use super::html::page;
use super::session::SignedInWith;
use crate::config::OidcSettings;
use crate::grpc::auth::jwt::identity_from_claims;
use crate::outbound::{OutboundHttp, describe};
use checkpointd_core::domain::Role;
use pending::{
    PENDING_LOGIN_TTL, Pending, PendingLogins, forget_login, login_cookie, state_from_cookies,
};

/// Largest answer read from the provider (discovery, JWKS, token).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// An ID token signed by a key the provider's JWKS lacks reads the JWKS again, at most this
/// often, so the provider's key rotation needs no restart and made-up key ids cannot turn the
/// server into a load generator against the provider.
const MIN_JWKS_REFETCH: Duration = Duration::from_secs(10);

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
    issuer: IssuerUrl,
    jwks_url: JsonWebKeySetUrl,
    /// The provider's signing keys, and when they were last read again after discovery.
    keys: RwLock<(CoreJsonWebKeySet, Option<Instant>)>,
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
        let jwks_url = metadata.jwks_uri().clone();
        let keys = RwLock::new((metadata.jwks().clone(), None));
        let issuer = metadata.issuer().clone();
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
            issuer,
            jwks_url,
            keys,
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
        let mut verified = self.verify(id_token, &pending.nonce).await;
        if let Err(ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::NoMatchingKey,
        )) = verified
        {
            self.refresh_keys().await;
            verified = self.verify(id_token, &pending.nonce).await;
        }
        verified.map_err(|error| format!("the ID token does not verify: {}", describe(&error)))?;
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

impl OidcSignIn {
    /// Checks `id_token` against the keys known now: signature (public-key algorithms only),
    /// issuer, audience (the client id), expiry and `nonce`.
    async fn verify(
        &self,
        id_token: &CoreIdToken,
        nonce: &Nonce,
    ) -> Result<(), ClaimsVerificationError> {
        let keys = self.keys.read().await;
        let verifier = CoreIdTokenVerifier::new_public_client(
            ClientId::new(self.settings.client_id.clone()),
            self.issuer.clone(),
            keys.0.clone(),
        )
        .set_allowed_algs(ALLOWED_ALGS);
        id_token.claims(&verifier, nonce).map(|_| ())
    }

    /// Reads the provider's JWKS again, unless it was read again less than
    /// [`MIN_JWKS_REFETCH`] ago; a failed read keeps the keys already known.
    async fn refresh_keys(&self) {
        let mut keys = self.keys.write().await;
        if keys.1.is_some_and(|read| read.elapsed() < MIN_JWKS_REFETCH) {
            return;
        }
        let http = |request| call(self.http.clone(), request);
        match CoreJsonWebKeySet::fetch_async(&self.jwks_url, &http).await {
            Ok(set) => *keys = (set, Some(Instant::now())),
            Err(error) => {
                let error = describe(&error);
                tracing::warn!(%error, "cannot refresh the OpenID provider's keys");
                keys.1 = Some(Instant::now());
            }
        }
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
