//! The sign-ins in flight between the console and the OpenID provider: the PKCE verifier and
//! nonce kept on the server by `state`, and the `SameSite=Lax` cookie that ties a `state` to
//! the browser that started it (see the parent module for why it is not the session cookie).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use axum::http::HeaderValue;
use axum::http::header;
use axum::response::Response;
use openidconnect::{Nonce, PkceCodeVerifier};
use sha2::{Digest, Sha256};

use crate::console::session::make_room;

/// The cookie naming the sign-in this browser started (its `state`).
pub const LOGIN_COOKIE: &str = "checkpointd_console_login";

/// How long a person may take at the provider before the sign-in must start again.
pub const PENDING_LOGIN_TTL: Duration = Duration::from_secs(10 * 60);

/// Sign-ins in flight at most; beyond it the oldest is dropped, so starting sign-ins cannot
/// grow the server's memory without bound.
const MAX_PENDING: usize = 10_000;

/// A sign-in in flight: what the callback needs to finish it.
pub struct Pending {
    pub verifier: PkceCodeVerifier,
    pub nonce: Nonce,
    pub expires_at: SystemTime,
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
    pub fn text(&self) -> &'static str {
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
    pub fn insert(&self, state: &str, pending: Pending, now: SystemTime) {
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

/// The `Set-Cookie` value holding a sign-in's `state` while the person is at the provider:
/// `SameSite=Lax`, so the provider's redirect back carries it; only on the callback's path.
pub fn login_cookie(state: &str, ttl: Duration, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{LOGIN_COOKIE}={state}; Path=/sign-in/oidc; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        ttl.as_secs()
    )
}

pub fn forget_login(response: &mut Response, secure: bool) {
    if let Ok(cookie) = HeaderValue::from_str(&login_cookie("", Duration::ZERO, secure)) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
}

/// The sign-in `state` a `Cookie` header carries, if any.
pub fn state_from_cookies(header: &str) -> Option<&str> {
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
