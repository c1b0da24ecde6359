//! API keys read from the store and remembered for a short time, so a key presented with the
//! right secret is admitted from memory instead of reading the store on every call.
//!
//! The rules, which together bound how long a revoked key may still be admitted:
//! - An entry is served for `ttl` from the moment its read *began* (the read saw the store as
//!   it was then, or later), so a revocation committed at time `t` is never served past
//!   `t + ttl` by any process, whatever happens to notifications. A zero `ttl` caches nothing.
//! - A change heard from the store's feed ([`KeyChange`]) drops that key's entry at once; a
//!   [`KeyChange::Resync`] (the feed may have missed changes) drops every entry.
//! - A read that was under way when a change was heard is not cached (it may predate the
//!   change); it still answers the call that made it, which began before the change arrived.
//!
//! Memory: at most one entry per key in the store, since only keys the store returned are
//! cached (the operator's table, not the caller's input).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use checkpointd_core::domain::ApiKey;
use checkpointd_storage::keys::KeyChange;

/// See the module documentation.
pub struct VerifiedKeys {
    ttl: Duration,
    entries: HashMap<String, Entry>,
    /// Counts the changes heard; a read records it when it begins.
    changes_heard: u64,
}

struct Entry {
    key: Arc<ApiKey>,
    /// When the read that returned the key began.
    read_at: Instant,
}

/// What a read must remember to be cached when it returns: when it began, and how many
/// changes had been heard then.
#[derive(Clone, Copy, Debug)]
pub struct ReadStart {
    at: Instant,
    changes_heard: u64,
}

impl VerifiedKeys {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: HashMap::new(),
            changes_heard: 0,
        }
    }

    /// The key with this id, if its entry is younger than the ttl at `now`.
    pub fn fresh(&self, id: &str, now: Instant) -> Option<Arc<ApiKey>> {
        let entry = self.entries.get(id)?;
        (now.saturating_duration_since(entry.read_at) < self.ttl).then(|| entry.key.clone())
    }

    /// Marks a read of the store beginning at `at`.
    pub fn read_starts(&self, at: Instant) -> ReadStart {
        ReadStart {
            at,
            changes_heard: self.changes_heard,
        }
    }

    /// What a read begun at `start` found: remembered unless a change was heard meanwhile;
    /// `None` (the key is gone from the store) forgets the id.
    pub fn read_ended(&mut self, id: &str, start: ReadStart, found: Option<&ApiKey>) {
        let Some(key) = found else {
            self.entries.remove(id);
            return;
        };
        if self.ttl.is_zero() || start.changes_heard != self.changes_heard {
            return;
        }
        self.entries.insert(
            key.id.clone(),
            Entry {
                key: Arc::new(key.clone()),
                read_at: start.at,
            },
        );
    }

    /// Applies a change heard from the store's feed.
    pub fn hear(&mut self, change: &KeyChange) {
        self.changes_heard += 1;
        match change {
            KeyChange::Key(id) => {
                self.entries.remove(id);
            }
            KeyChange::Resync => self.entries.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::{NewApiKey, Role, TenantScope};

    const TTL: Duration = Duration::from_secs(5);

    fn key() -> ApiKey {
        let fresh = NewApiKey::generate().unwrap();
        ApiKey {
            id: fresh.id,
            secret_hash: fresh.secret_hash,
            tenant: TenantScope::All,
            role: Role::Admin,
            name: "k".into(),
            created_at: std::time::SystemTime::now(),
            revoked_at: None,
        }
    }

    /// A cache holding `key`, read at `at`.
    fn holding(key: &ApiKey, at: Instant) -> VerifiedKeys {
        let mut keys = VerifiedKeys::new(TTL);
        let start = keys.read_starts(at);
        keys.read_ended(&key.id, start, Some(key));
        keys
    }

    #[test]
    fn an_entry_is_served_until_the_ttl_counted_from_when_its_read_began() {
        let key = key();
        let read_began = Instant::now();
        let keys = holding(&key, read_began);
        assert!(keys.fresh(&key.id, read_began).is_some());
        assert!(
            keys.fresh(&key.id, read_began + TTL - Duration::from_millis(1))
                .is_some()
        );
        assert!(keys.fresh(&key.id, read_began + TTL).is_none());
        assert!(keys.fresh("0000000000000000", read_began).is_none());
    }

    #[test]
    fn a_heard_change_drops_that_key_and_a_resync_drops_every_key() {
        let (a, b) = (key(), key());
        let now = Instant::now();
        let mut keys = holding(&a, now);
        let start = keys.read_starts(now);
        keys.read_ended(&b.id, start, Some(&b));
        keys.hear(&KeyChange::Key(a.id.clone()));
        assert!(keys.fresh(&a.id, now).is_none());
        assert!(keys.fresh(&b.id, now).is_some());
        keys.hear(&KeyChange::Resync);
        assert!(keys.fresh(&b.id, now).is_none());
    }

    #[test]
    fn a_read_under_way_when_a_change_is_heard_is_not_cached() {
        let key = key();
        let now = Instant::now();
        let mut keys = VerifiedKeys::new(TTL);
        let start = keys.read_starts(now);
        // The revocation's notification arrives while the read (which may predate it) runs.
        keys.hear(&KeyChange::Key(key.id.clone()));
        keys.read_ended(&key.id, start, Some(&key));
        assert!(keys.fresh(&key.id, now).is_none());
        // The next read, begun after the change, is.
        let start = keys.read_starts(now);
        keys.read_ended(&key.id, start, Some(&key));
        assert!(keys.fresh(&key.id, now).is_some());
    }

    #[test]
    fn a_zero_ttl_caches_nothing_and_a_key_gone_from_the_store_is_forgotten() {
        let key = key();
        let now = Instant::now();
        let mut off = VerifiedKeys::new(Duration::ZERO);
        let start = off.read_starts(now);
        off.read_ended(&key.id, start, Some(&key));
        assert!(off.fresh(&key.id, now).is_none());

        let mut keys = holding(&key, now);
        let start = keys.read_starts(now);
        keys.read_ended(&key.id, start, None);
        assert!(keys.fresh(&key.id, now).is_none());
    }
}
