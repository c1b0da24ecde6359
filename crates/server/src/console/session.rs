//! Console sessions: who signed in, in which tenant, until when; kept on the server, named by a
//! random cookie, each with its own CSRF token.
//!
//! The cookie carries only a random token; the store keys sessions by the token's SHA-256, so
//! the table itself holds nothing that could be replayed as a cookie.
//!
//! A session's life slides: it ends `--console-session-ttl` after the person's last request
//! (an operator typing a long comment, whose page pings on activity, is not signed out
//! mid-sentence), but never later than [`ABSOLUTE_LIFE`] after sign-in (or the TTL itself, when
//! that is longer), so a stolen cookie is not good forever. Requests a page makes on its own
//! (live refreshes, event streams) are passive and extend nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use crate::grpc::auth::CallContext;

/// The cookie that names a session.
pub const SESSION_COOKIE: &str = "checkpointd_console";

/// How many sessions the store keeps at most; a sign-in beyond it drops the oldest one, so
/// repeated sign-ins cannot grow the server's memory without bound.
const MAX_SESSIONS: usize = 10_000;

/// The most a session can last from sign-in however active the person is, unless the idle
/// TTL itself is longer: then the session lasts exactly that TTL, as before sliding existed.
pub const ABSOLUTE_LIFE: Duration = Duration::from_secs(12 * 60 * 60);

/// How long a session that started now may last at most, for an idle TTL of `ttl`; the
/// cookie's `Max-Age` (the server decides expiry, the cookie only must not end first).
pub fn absolute_life(ttl: Duration) -> Duration {
    ttl.max(ABSOLUTE_LIFE)
}

/// Where a session's identity came from: what must still hold for the session to stay valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignedInWith {
    /// An operator or admin API key: the session ends when the key is revoked.
    ApiKey { id: String },
    /// The organisation's OpenID Connect provider: the session lasts its own life, as the
    /// provider is not asked again.
    OpenIdConnect { subject: String },
}

/// One signed-in person: the same [`CallContext`] the gRPC auth layer gives a call, so every
/// page goes through the same role table and tenant scoping, however the person signed in.
#[derive(Clone, Debug)]
pub struct Session {
    pub context: CallContext,
    pub signed_in_with: SignedInWith,
    /// The token every form that changes something must send back.
    pub csrf_token: String,
    /// When the session ends unless the person makes a request first.
    pub expires_at: SystemTime,
    /// How long a request keeps the session alive.
    pub idle_ttl: Duration,
    /// When the session ends however active the person is.
    pub ends_by: SystemTime,
}

impl Session {
    /// The session after a request at `now`: alive `idle_ttl` longer, within its absolute life.
    fn extended(&self, now: SystemTime) -> SystemTime {
        (now + self.idle_ttl).min(self.ends_by).max(self.expires_at)
    }
}

/// The server-side session table.
#[derive(Default)]
pub struct SessionStore {
    sessions: Mutex<HashMap<[u8; 32], Session>>,
}

impl SessionStore {
    /// Starts a session for `context`; returns the cookie value naming it.
    pub fn create(
        &self,
        context: CallContext,
        signed_in_with: SignedInWith,
        ttl: Duration,
        now: SystemTime,
    ) -> Result<(String, Session), getrandom::Error> {
        let token = random_token()?;
        let session = Session {
            context,
            signed_in_with,
            csrf_token: random_token()?,
            expires_at: now + ttl,
            idle_ttl: ttl,
            ends_by: now + absolute_life(ttl),
        };
        let mut sessions = self.lock();
        make_room(&mut sessions, MAX_SESSIONS, now, |kept| kept.expires_at);
        sessions.insert(digest(&token), session.clone());
        Ok((token, session))
    }

    /// The live session `token` names; an expired one is removed and never returned.
    pub fn find(&self, token: &str, now: SystemTime) -> Option<Session> {
        let key = digest(token);
        let mut sessions = self.lock();
        let session = sessions.get(&key)?;
        if session.expires_at <= now {
            sessions.remove(&key);
            return None;
        }
        Some(session.clone())
    }

    /// The live session `token` names, extended by a request at `now` (sliding expiry within
    /// its absolute life); an expired one is removed and never returned.
    pub fn touch(&self, token: &str, now: SystemTime) -> Option<Session> {
        let key = digest(token);
        let mut sessions = self.lock();
        let session = sessions.get_mut(&key)?;
        if session.expires_at <= now {
            sessions.remove(&key);
            return None;
        }
        session.expires_at = session.extended(now);
        Some(session.clone())
    }

    /// Ends the session `token` names, if any.
    pub fn remove(&self, token: &str) {
        self.lock().remove(&digest(token));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Makes room for one more entry in a table whose entries expire: drops the expired ones and,
/// if it is still full, the one that expires first.
pub fn make_room<V>(
    table: &mut HashMap<[u8; 32], V>,
    max: usize,
    now: SystemTime,
    expires_at: impl Fn(&V) -> SystemTime,
) {
    table.retain(|_, kept| expires_at(kept) > now);
    if table.len() >= max
        && let Some(oldest) = table
            .iter()
            .min_by_key(|(_, kept)| expires_at(kept))
            .map(|(key, _)| *key)
    {
        table.remove(&oldest);
    }
}

/// Whether `presented` is the session's CSRF token, compared in time independent of where
/// they first differ.
pub fn csrf_matches(session: &Session, presented: Option<&str>) -> bool {
    let Some(presented) = presented else {
        return false;
    };
    let expected = session.csrf_token.as_bytes();
    let presented = presented.as_bytes();
    expected.len() == presented.len()
        && expected
            .iter()
            .zip(presented)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

/// The `Set-Cookie` value that hands the browser `token`: never readable by scripts, never
/// sent by another site's request, only over TLS when the console speaks it.
pub fn session_cookie(token: &str, ttl: Duration, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        ttl.as_secs().max(1)
    )
}

/// The `Set-Cookie` value that makes the browser forget the session.
pub fn cleared_cookie(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}")
}

/// The session token a `Cookie` header carries, if any.
pub fn token_from_cookies(header: &str) -> Option<&str> {
    header.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name == SESSION_COOKIE && !value.is_empty()).then_some(value)
    })
}

fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::{Identity, Role, Tenant, TenantScope};

    fn context() -> CallContext {
        let tenant = Tenant::parse("acme").unwrap();
        CallContext {
            identity: Identity {
                subject: "key:abc".into(),
                tenant: TenantScope::One(tenant.clone()),
                role: Role::Operator,
                authenticated: true,
            },
            tenant,
        }
    }

    fn signed_in(store: &SessionStore, now: SystemTime) -> (String, Session) {
        let with = SignedInWith::ApiKey { id: "abc".into() };
        store
            .create(context(), with, Duration::from_secs(60), now)
            .unwrap()
    }

    #[test]
    fn a_session_is_found_until_its_expiry_and_never_after() {
        let store = SessionStore::default();
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let (token, _) = signed_in(&store, start);
        let just_before = start + Duration::from_secs(59);
        assert!(store.find(&token, just_before).is_some());
        assert!(
            store
                .find(&token, start + Duration::from_secs(60))
                .is_none()
        );
        // Gone for good, even if the clock went back.
        assert!(store.find(&token, start).is_none());
    }

    #[test]
    fn a_request_slides_the_expiry_but_never_past_the_absolute_life() {
        let store = SessionStore::default();
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let (token, session) = signed_in(&store, start);
        assert_eq!(session.ends_by, start + ABSOLUTE_LIFE);
        // Active every 50 s, the 60 s session outlives its first minute by far...
        let mut now = start;
        while now < start + ABSOLUTE_LIFE - Duration::from_secs(100) {
            now += Duration::from_secs(50);
            let touched = store.touch(&token, now).expect("alive while active");
            assert!(touched.expires_at <= touched.ends_by);
        }
        // ...but not past its absolute life, however active.
        let mut last = None;
        while now < start + ABSOLUTE_LIFE + Duration::from_secs(100) {
            now += Duration::from_secs(50);
            last = store.touch(&token, now);
            if last.is_none() {
                break;
            }
        }
        assert!(last.is_none(), "a session ends by its absolute life");
        assert!(now <= start + ABSOLUTE_LIFE + Duration::from_secs(50));
    }

    #[test]
    fn a_passive_look_extends_nothing_and_an_idle_session_ends() {
        let store = SessionStore::default();
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let (token, _) = signed_in(&store, start);
        assert!(
            store
                .find(&token, start + Duration::from_secs(50))
                .is_some()
        );
        assert!(
            store
                .find(&token, start + Duration::from_secs(61))
                .is_none()
        );
        assert!(
            store
                .touch(&token, start + Duration::from_secs(62))
                .is_none()
        );
    }

    #[test]
    fn a_ttl_longer_than_the_absolute_life_is_the_life() {
        let long = ABSOLUTE_LIFE * 2;
        assert_eq!(absolute_life(long), long);
        assert_eq!(absolute_life(Duration::from_secs(60)), ABSOLUTE_LIFE);
    }

    #[test]
    fn the_table_holds_no_cookie_value_and_unknown_tokens_find_nothing() {
        let store = SessionStore::default();
        let now = SystemTime::now();
        let (token, _) = signed_in(&store, now);
        assert!(!store.lock().keys().any(|key| hex::encode(key) == token));
        assert!(store.find(&"0".repeat(64), now).is_none());
        store.remove(&token);
        assert!(store.find(&token, now).is_none());
    }

    #[test]
    fn only_the_sessions_own_csrf_token_matches() {
        let store = SessionStore::default();
        let now = SystemTime::now();
        let (_, session) = signed_in(&store, now);
        let (_, other) = signed_in(&store, now);
        assert!(csrf_matches(&session, Some(&session.csrf_token)));
        assert!(!csrf_matches(&session, Some(&other.csrf_token)));
        assert!(!csrf_matches(&session, Some("")));
        assert!(!csrf_matches(&session, None));
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_with_tls() {
        let cookie = session_cookie("t", Duration::from_secs(900), true);
        for part in ["HttpOnly", "SameSite=Strict", "Secure", "Max-Age=900"] {
            assert!(cookie.contains(part), "{cookie}");
        }
        assert!(!session_cookie("t", Duration::from_secs(9), false).contains("Secure"));
        let header = format!("theme=dark; {SESSION_COOKIE}=abc; other=1");
        assert_eq!(token_from_cookies(&header), Some("abc"));
        assert_eq!(token_from_cookies("theme=dark"), None);
    }
}
