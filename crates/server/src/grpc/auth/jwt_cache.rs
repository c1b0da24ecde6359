//! JWTs already verified, remembered by the SHA-256 of the token, so a token presented again
//! is admitted without checking its signature and claims again.
//!
//! The rules:
//! - Only a token that verified is remembered, with the identity it proved, until the earlier
//!   of its `exp` (plus the leeway verification allows) and [`REMEMBER_FOR`] after it was
//!   verified. A token not yet valid (`nbf`) never verified, so it is never remembered.
//! - JWKS rotation: whenever the JWKS is read again, an entry survives only if the key that
//!   verified it is in the new set unchanged (same `kid`, same key; a token without a `kid`,
//!   only when both sets are that same single key). A hit is refused while the JWKS is due
//!   for its refresh, so the call that refreshes it comes first: no entry verified under a key
//!   that left the JWKS outlives the refresh that saw it go.
//! - Memory: at most [`MAX_REMEMBERED`] entries of a digest and an identity each. Only tokens
//!   that verified get in, so a flood of forged ones adds nothing; when full, expired entries
//!   are swept and, if it is still full, a new token is simply not remembered (every entry
//!   leaves within [`REMEMBER_FOR`]), so nobody can evict the entries of others.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

use checkpointd_core::domain::Identity;

/// The longest a verified token is admitted without verifying it again.
pub const REMEMBER_FOR: Duration = Duration::from_secs(60);
/// Tokens remembered at once.
pub const MAX_REMEMBERED: usize = 10_000;

/// See the module documentation.
#[derive(Default)]
pub struct JwtCache {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: HashMap<[u8; 32], Entry>,
    /// In JWKS mode, when the JWKS is next due to be read; hits are refused from then on.
    jwks_due: Option<Instant>,
    /// Which read of the JWKS the entries were checked against.
    jwks_read: u64,
}

struct Entry {
    identity: Identity,
    /// The `kid` of the key that verified it.
    kid: Option<String>,
    until: Instant,
}

/// What verification established about a token, for [`JwtCache::remember`].
pub struct Verified<'a> {
    pub identity: &'a Identity,
    pub kid: Option<&'a str>,
    /// When the token stops verifying: its `exp` plus the leeway.
    pub valid_until: SystemTime,
    /// Which read of the JWKS held the key that verified it (0 with a shared secret): a token
    /// verified under a set that has since been replaced is not remembered, since the entries
    /// were checked against the new set without it.
    pub jwks_read: u64,
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl JwtCache {
    fn state(&self) -> MutexGuard<'_, State> {
        // Every change under the lock is one map operation or a retain; none can panic halfway.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The identity `token` proved, when it is remembered and still valid at `now`.
    pub fn get(&self, token: &str, now: Instant) -> Option<Identity> {
        let state = self.state();
        if state.jwks_due.is_some_and(|due| now >= due) {
            return None;
        }
        let entry = state.entries.get(&digest(token))?;
        (now < entry.until).then(|| entry.identity.clone())
    }

    /// Remembers a token that verified at `now` (`wall_now` on the system clock).
    pub fn remember(
        &self,
        token: &str,
        verified: Verified<'_>,
        now: Instant,
        wall_now: SystemTime,
    ) {
        let left = verified
            .valid_until
            .duration_since(wall_now)
            .unwrap_or_default()
            .min(REMEMBER_FOR);
        if left.is_zero() {
            return;
        }
        let mut state = self.state();
        if verified.jwks_read != state.jwks_read {
            return;
        }
        if state.entries.len() >= MAX_REMEMBERED {
            state.entries.retain(|_, entry| now < entry.until);
            if state.entries.len() >= MAX_REMEMBERED {
                return;
            }
        }
        state.entries.insert(
            digest(token),
            Entry {
                identity: verified.identity.clone(),
                kid: verified.kid.map(str::to_owned),
                until: now + left,
            },
        );
    }

    /// The JWKS was read for the `read`th time and is next due at `due`: keeps only the
    /// entries whose key `unchanged` says the new set holds as before.
    pub fn jwks_read(&self, read: u64, due: Instant, unchanged: impl Fn(Option<&str>) -> bool) {
        let mut state = self.state();
        state.jwks_due = Some(due);
        state.jwks_read = read;
        state
            .entries
            .retain(|_, entry| unchanged(entry.kid.as_deref()));
    }

    /// Reading the JWKS failed and the keys already known are kept until `due`.
    pub fn jwks_kept(&self, due: Instant) {
        self.state().jwks_due = Some(due);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::{Role, TenantScope};

    fn identity(subject: &str) -> Identity {
        Identity {
            subject: subject.into(),
            tenant: TenantScope::All,
            role: Role::Admin,
            authenticated: true,
        }
    }

    /// Remembers `token` as verified at `now` under the JWKS read the cache last saw.
    fn remember(
        cache: &JwtCache,
        token: &str,
        kid: Option<&str>,
        valid_for: Duration,
        now: Instant,
    ) {
        let read = cache.state().jwks_read;
        remember_under(cache, read, token, kid, valid_for, now);
    }

    fn remember_under(
        cache: &JwtCache,
        jwks_read: u64,
        token: &str,
        kid: Option<&str>,
        valid_for: Duration,
        now: Instant,
    ) {
        let wall = SystemTime::now();
        let who = identity(token);
        let verified = Verified {
            identity: &who,
            kid,
            valid_until: wall + valid_for,
            jwks_read,
        };
        cache.remember(token, verified, now, wall);
    }

    #[test]
    fn a_token_is_remembered_until_its_expiry_or_the_bound_whichever_is_first() {
        let cache = JwtCache::default();
        let now = Instant::now();
        remember(&cache, "short", None, Duration::from_secs(10), now);
        remember(&cache, "long", None, Duration::from_secs(3600), now);
        remember(&cache, "expired", None, Duration::ZERO, now);
        assert_eq!(cache.get("short", now).unwrap().subject, "short");
        assert!(cache.get("short", now + Duration::from_secs(10)).is_none());
        assert!(
            cache
                .get("long", now + REMEMBER_FOR - Duration::from_millis(1))
                .is_some()
        );
        assert!(cache.get("long", now + REMEMBER_FOR).is_none());
        assert!(cache.get("expired", now).is_none());
        assert!(cache.get("never-verified", now).is_none());
    }

    #[test]
    fn a_jwks_read_keeps_only_tokens_whose_key_is_unchanged_and_a_due_jwks_refuses_hits() {
        let cache = JwtCache::default();
        let now = Instant::now();
        let hour = Duration::from_secs(3600);
        remember(&cache, "kept", Some("k1"), hour, now);
        remember(&cache, "rotated-out", Some("k0"), hour, now);
        remember(&cache, "no-kid", None, hour, now);
        let due = now + Duration::from_secs(30);
        cache.jwks_read(1, due, |kid| kid == Some("k1"));
        assert!(cache.get("kept", now).is_some());
        assert!(cache.get("rotated-out", now).is_none());
        assert!(cache.get("no-kid", now).is_none());
        // Once the JWKS is due, the call that reads it again must come first.
        assert!(cache.get("kept", due).is_none());
    }

    #[test]
    fn a_token_verified_under_a_jwks_since_replaced_is_not_remembered() {
        let cache = JwtCache::default();
        let now = Instant::now();
        // Verified under the first read; the second replaced the set before it was remembered.
        cache.jwks_read(2, now + Duration::from_secs(30), |_| true);
        let hour = Duration::from_secs(3600);
        remember_under(&cache, 1, "late", Some("k0"), hour, now);
        assert!(cache.get("late", now).is_none());
    }

    #[test]
    fn a_full_cache_sweeps_expired_entries_and_otherwise_remembers_nothing_new() {
        let cache = JwtCache::default();
        let now = Instant::now();
        remember(&cache, "soon-gone", None, Duration::from_secs(1), now);
        for n in 1..MAX_REMEMBERED {
            remember(
                &cache,
                &format!("t{n}"),
                None,
                Duration::from_secs(3600),
                now,
            );
        }
        remember(&cache, "one-too-many", None, Duration::from_secs(3600), now);
        assert!(cache.get("one-too-many", now).is_none());
        assert!(
            cache.get("t1", now).is_some(),
            "entries are never evicted by newcomers"
        );
        // Once an entry has expired, its place can be taken.
        let later = now + Duration::from_secs(2);
        remember(&cache, "newcomer", None, Duration::from_secs(3600), later);
        assert!(cache.get("newcomer", later).is_some());
        assert_eq!(cache.state().entries.len(), MAX_REMEMBERED);
    }
}
