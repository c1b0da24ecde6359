//! The console's gate: sign-in with an operator or admin API key (OpenID Connect's is in
//! [`super::oidc`]), sign-out, the session every
//! page needs, the CSRF token every change needs, and the headers every answer carries.
//!
//! Sign-in verifies the key with the gRPC port's own [`Authenticator`], then resolves the
//! tenant with the same [`Identity::tenant_for`]: the session holds the resulting
//! [`CallContext`], so the console acts as exactly that credential would over gRPC.

use std::collections::HashMap;
use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::request::Parts;
use axum::response::{Html, IntoResponse, Redirect, Response};

use super::html::{escape, page};
use super::session::{
    Session, SignedInWith, absolute_life, cleared_cookie, csrf_matches, session_cookie,
    token_from_cookies,
};
use super::{Console, Shared};
use crate::grpc::auth::CallContext;
use checkpointd_core::domain::{Identity, PresentedKey, Role, Tenant};

/// A form's fields, decoded.
pub type Form = HashMap<String, String>;

/// The fields of an `application/x-www-form-urlencoded` body or query string.
pub fn form(bytes: &[u8]) -> Form {
    form_urlencoded::parse(bytes).into_owned().collect()
}

/// A page's query string, decoded.
pub struct Query(pub Form);

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(form(parts.uri.query().unwrap_or("").as_bytes())))
    }
}

/// A page handler that takes a [`Session`] runs only for someone signed in; anyone else is
/// sent to the sign-in page.
impl FromRequestParts<Shared> for Session {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, console: &Shared) -> Result<Self, Response> {
        signed_in(console, &parts.headers).await
    }
}

/// The header console.js sends on requests the page makes on its own (live refreshes): they
/// show the session is open, not that a person is there, so they extend nothing.
pub const PASSIVE_HEADER: &str = "x-console-passive";

/// The live session the request's cookie names, or the answer to give instead: to the
/// sign-in page. A session whose API key was revoked since ends here. A person's request
/// extends the session (sliding expiry); one marked [`PASSIVE_HEADER`] does not.
pub async fn signed_in(console: &Shared, headers: &HeaderMap) -> Result<Session, Response> {
    let extend = !headers.contains_key(PASSIVE_HEADER);
    session_for(console, headers, extend).await
}

/// The same as [`signed_in`], extending nothing: for event streams, which stay open without
/// anyone being there.
pub async fn signed_in_passively(
    console: &Shared,
    headers: &HeaderMap,
) -> Result<Session, Response> {
    session_for(console, headers, false).await
}

async fn session_for(
    console: &Shared,
    headers: &HeaderMap,
    extend: bool,
) -> Result<Session, Response> {
    let to_sign_in = || Redirect::to("/sign-in").into_response();
    let token = headers
        .get(header::COOKIE)
        .and_then(|value| value.to_str().ok())
        .and_then(token_from_cookies)
        .ok_or_else(to_sign_in)?;
    let now = SystemTime::now();
    let found = if extend {
        console.sessions.touch(token, now)
    } else {
        console.sessions.find(token, now)
    };
    let session = found.ok_or_else(to_sign_in)?;
    let SignedInWith::ApiKey { id } = &session.signed_in_with else {
        return Ok(session);
    };
    let live = match console.keys.find_key(id).await {
        Ok(Some(key)) => key.revoked_at.is_none_or(|revoked| revoked > now),
        Ok(None) => false,
        Err(error) => {
            tracing::warn!(%error, "console cannot check a session's key");
            return Err(failure(
                StatusCode::SERVICE_UNAVAILABLE,
                "the database is unavailable",
            ));
        }
    };
    if !live {
        console.sessions.remove(token);
        return Err(to_sign_in());
    }
    Ok(session)
}

/// `GET /session`: how long the session has left, as JSON (`{"expires_in_ms":..,
/// "idle_ttl_ms":..}`), or 401 without one. console.js calls it when the person is active
/// (extending the session like any request) and before it submits a form, so a form is never
/// sent into an ended session, where its draft would be lost behind the sign-in page.
pub async fn session_status(State(console): State<Shared>, headers: HeaderMap) -> Response {
    let session = match signed_in(&console, &headers).await {
        Ok(session) => session,
        // No session: 401, which console.js reads as "sign in again" (a redirect it could
        // not tell from a page). Anything else (the database is down) is passed on as it is.
        Err(refusal) if refusal.status().is_redirection() => {
            return (StatusCode::UNAUTHORIZED, "sign in to the console first").into_response();
        }
        Err(refusal) => return refusal,
    };
    let left = session
        .expires_at
        .duration_since(SystemTime::now())
        .unwrap_or_default();
    (
        [(header::CONTENT_TYPE, "application/json")],
        format!(
            r#"{{"expires_in_ms":{},"idle_ttl_ms":{}}}"#,
            left.as_millis(),
            session.idle_ttl.as_millis()
        ),
    )
        .into_response()
}

/// The session and form of a request that changes something: signed in, from this console's
/// own pages (no foreign `Origin`), with the session's CSRF token in the `csrf` field or the
/// `x-csrf-token` header. Anything else is refused before any change.
pub async fn changing(
    console: &Shared,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<(Session, Form), Response> {
    if foreign_origin(headers) {
        return Err(cross_site());
    }
    let session = signed_in(console, headers).await?;
    let fields = form(body);
    let presented = fields.get("csrf").map(String::as_str).or_else(|| {
        headers
            .get("x-csrf-token")
            .and_then(|value| value.to_str().ok())
    });
    if !csrf_matches(&session, presented) {
        return Err(failure(
            StatusCode::FORBIDDEN,
            "this form is stale or did not come from the console: reload the page and try again",
        ));
    }
    Ok((session, fields))
}

/// Whether the request's `Origin` names another site than the one it was sent to (a browser
/// sends `Origin` on every cross-site POST).
fn foreign_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return false;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|origin| origin.split_once("://"))
        .map(|(_, rest)| rest);
    !matches!((origin_host, host), (Some(origin), Some(host)) if origin == host)
}

/// The refusal of a cross-site request.
fn cross_site() -> Response {
    failure(StatusCode::FORBIDDEN, "cross-site request refused")
}

/// `GET /sign-in`: the form, or the inbox for someone already signed in.
pub async fn sign_in_page(State(console): State<Shared>, headers: HeaderMap) -> Response {
    if signed_in(&console, &headers).await.is_ok() {
        return Redirect::to("/inbox").into_response();
    }
    sign_in_form(&console, StatusCode::OK, None)
}

/// The sign-in page, with `problem` said on top: the provider's link when OpenID Connect is
/// configured, and the API-key form (the break-glass path) always.
pub fn sign_in_form(console: &Console, status: StatusCode, problem: Option<&str>) -> Response {
    let problem = problem.map_or(String::new(), |text| {
        format!(
            r#"<p class="notice error" role="alert"><strong>Not signed in:</strong> {}</p>"#,
            escape(text)
        )
    });
    let provider = console.oidc.as_ref().map_or(String::new(), |oidc| {
        format!(
            r#"<p><a class="button" href="/sign-in/oidc">Sign in with {}</a></p>
<p>Or, break-glass:</p>"#,
            escape(oidc.provider_name())
        )
    });
    let body = format!(
        r#"{problem}{provider}<form method="post" action="/sign-in" class="sign-in">
<p>Sign in with an operator or admin API key (<code>checkpointd keys create --role operator</code>). Agent keys cannot sign in.</p>
<p><label for="api_key">API key</label><br><input id="api_key" name="api_key" type="password" autocomplete="off" required autofocus size="60"></p>
<p><label for="tenant">Tenant</label> (only for an all-tenants admin key; empty: <code>default</code>)<br><input id="tenant" name="tenant" autocomplete="off"></p>
<p><button type="submit">Sign in</button></p>
</form>"#
    );
    (status, Html(page("Sign in", None, "", &body))).into_response()
}

/// What every refused key is told, with [`StatusCode::UNAUTHORIZED`]: malformed, unknown,
/// revoked and agent keys alike, so the answer never tells a key's holder (or someone
/// guessing) which of them a key is.
pub const KEY_REFUSED: &str =
    "this key cannot sign in to the console; use an active operator or admin key";

/// `POST /sign-in`: verifies the key as the gRPC port would, refuses agents, starts a session.
pub async fn sign_in(State(console): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if foreign_origin(&headers) {
        return cross_site();
    }
    let fields = form(&body);
    let key = fields.get("api_key").map_or("", |key| key.trim());
    let refused = || sign_in_form(&console, StatusCode::UNAUTHORIZED, Some(KEY_REFUSED));
    let Some(presented) = PresentedKey::parse(key) else {
        return refused();
    };
    let mut bearer = HeaderMap::new();
    let Ok(value) = HeaderValue::from_str(&format!("Bearer {key}")) else {
        return refused();
    };
    bearer.insert(header::AUTHORIZATION, value);
    let identity = match console.auth.authenticate(&bearer).await {
        Ok(identity) if identity.role >= Role::Operator => identity,
        Ok(_) | Err(_) => return refused(),
    };
    let context = match context_for(identity, fields.get("tenant").map(String::as_str)) {
        Ok(context) => context,
        Err(why) => return sign_in_form(&console, StatusCode::FORBIDDEN, Some(&why)),
    };
    let with = SignedInWith::ApiKey {
        id: presented.id.to_owned(),
    };
    let cookie = match start_session(&console, context, with) {
        Ok(cookie) => cookie,
        Err(failed) => return *failed,
    };
    let mut response = Redirect::to("/inbox").into_response();
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// Starts a session for `context`; returns the `Set-Cookie` value that hands it to the
/// browser.
pub fn start_session(
    console: &Console,
    context: CallContext,
    with: SignedInWith,
) -> Result<String, Box<Response>> {
    match console
        .sessions
        .create(context, with, console.session_ttl, SystemTime::now())
    {
        // The cookie lasts the session's absolute life: the server ends it sooner when idle.
        Ok((token, _)) => Ok(session_cookie(
            &token,
            absolute_life(console.session_ttl),
            console.secure,
        )),
        Err(error) => {
            tracing::error!(%error, "console cannot draw a session token");
            Err(Box::new(failure(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot start a session",
            )))
        }
    }
}

/// The session's call context: the tenant resolved from the identity and the tenant the
/// person named, by the same rule as `x-tenant-id` on the gRPC port.
pub fn context_for(identity: Identity, tenant: Option<&str>) -> Result<CallContext, String> {
    let requested = match tenant.map(str::trim).filter(|name| !name.is_empty()) {
        None => None,
        Some(name) => Some(Tenant::parse(name).map_err(|error| error.to_string())?),
    };
    let tenant = identity
        .tenant_for(requested)
        .map_err(|error| error.to_string())?;
    Ok(CallContext { identity, tenant })
}

/// `POST /sign-out`: ends the session (CSRF-checked, so no other site can sign someone out).
pub async fn sign_out(State(console): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(refused) = changing(&console, &headers, &body).await {
        return refused;
    }
    if let Some(token) = headers
        .get(header::COOKIE)
        .and_then(|value| value.to_str().ok())
        .and_then(token_from_cookies)
    {
        console.sessions.remove(token);
    }
    let mut response = Redirect::to("/sign-in").into_response();
    if let Ok(cookie) = HeaderValue::from_str(&cleared_cookie(console.secure)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// A page that says what went wrong, with `status`.
pub fn failure(status: StatusCode, text: &str) -> Response {
    let body = format!(
        r#"<p class="notice error" role="alert"><strong>{}:</strong> {}</p><p><a href="/inbox">Back to the inbox</a></p>"#,
        status.as_u16(),
        escape(text)
    );
    (
        status,
        Html(page(
            status.canonical_reason().unwrap_or("Error"),
            None,
            "",
            &body,
        )),
    )
        .into_response()
}

/// Headers on every answer: no caching of pages that show tenant data, no framing, no
/// scripts or styles from anywhere but the console itself, no referrer leaking run ids to
/// other sites. The referrer policy is `same-origin`, not `no-referrer`: under `no-referrer`
/// Chromium sends `Origin: null` on the console's own form posts, which the cross-site check
/// must refuse.
pub async fn protective_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name: &'static str, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        headers,
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
         connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    set(headers, "x-frame-options", "DENY");
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "referrer-policy", "same-origin");
    if !headers.contains_key(header::CACHE_CONTROL) {
        set(headers, "cache-control", "no-store");
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    #[test]
    fn a_post_from_another_site_is_foreign_and_one_from_the_console_is_not() {
        assert!(!foreign_origin(&headers("console:8080", None)));
        assert!(!foreign_origin(&headers(
            "console:8080",
            Some("https://console:8080")
        )));
        assert!(foreign_origin(&headers(
            "console:8080",
            Some("https://evil.example")
        )));
        assert!(foreign_origin(&headers(
            "console:8080",
            Some("https://console:9999")
        )));
        assert!(foreign_origin(&headers("console:8080", Some("null"))));
    }

    #[test]
    fn an_identity_bound_to_one_tenant_may_not_name_another_at_sign_in() {
        use checkpointd_core::domain::TenantScope;
        let acme = Tenant::parse("acme").unwrap();
        let operator = Identity {
            subject: "key:k".into(),
            tenant: TenantScope::One(acme.clone()),
            role: Role::Operator,
            authenticated: true,
        };
        assert_eq!(
            context_for(operator.clone(), Some(" ")).unwrap().tenant,
            acme
        );
        assert!(context_for(operator, Some("other")).is_err());
    }
}
