//! API-key lookups that a flood of forged keys cannot turn into a flood of database reads.
//!
//! The gate remembers every key id it has seen in the store with the hash of its secret
//! (`known`), and for a short time every id it looked for and did not find (`unknown`).
//! - A known id with a wrong secret is refused from memory: a key's secret hash never changes
//!   (keys are created and revoked, never edited), so the remembered hash is the truth.
//! - A known id with the right secret is admitted from memory while the key read for it is
//!   fresh, and read again otherwise ([`VerifiedKeys`] states the rules and the revocation
//!   bound: the cache ttl, and far sooner wherever the store's change feed reaches).
//! - An id remembered as unknown is refused from memory for [`WINDOW`].
//! - Any other id costs a read, but at most [`MISSES_PER_WINDOW`] reads per [`WINDOW`] may find
//!   nothing; once they are spent, unknown ids are refused from memory until the window ends.
//!   The first read of each window reloads the whole list of keys instead of one row, so a key
//!   created while a flood of forged ids spends the budget is still found within one window.
//!
//! A key made by `checkpointd keys create` (another process, on the database) works on its
//! first call: its id is 64 random bits, so no forged id can have put it in `unknown` unless
//! the attacker guessed it, and reads that find a key do not spend the budget. Only during a
//! flood of unknown ids may its first calls be refused, for at most one window.
//!
//! Before each lookup the gate applies the changes its store's feed has told of since the last
//! one ([`ApiKeyStore::watch_keys`]): a created key's id leaves `unknown`, a created or revoked
//! one leaves the verified keys.
//!
//! Memory: `known` and the verified keys hold one entry per key in the store (the operator's
//! table, not the attacker's input); `unknown` holds at most [`MAX_UNKNOWN`] ids, oldest
//! dropped first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use checkpointd_core::domain::{ApiKey, PresentedKey};
use checkpointd_core::error::Error;
use checkpointd_storage::keys::{ApiKeyStore, KeyChange, KeyWatch};

use super::verified_keys::VerifiedKeys;

/// How long an unknown id is remembered, and the period of the read budget for unknown ids.
pub const WINDOW: Duration = Duration::from_secs(5);
/// Reads per [`WINDOW`] that may find no key before unknown ids are refused unread.
pub const MISSES_PER_WINDOW: u32 = 4;
/// Unknown ids remembered at once; beyond this the oldest are forgotten first.
pub const MAX_UNKNOWN: usize = 10_000;

/// What the store says about a presented key.
pub enum Found {
    /// The key, read now or remembered from a fresh read, whose secret the caller presented.
    Key(Arc<ApiKey>),
    /// Refused; why, for the debug log.
    Refused(&'static str),
}

/// See the module documentation.
pub struct KeyGate {
    store: Arc<dyn ApiKeyStore>,
    state: Mutex<State>,
    /// Woken whenever a read for an unknown id settles, for the calls waiting on it.
    settled: tokio::sync::Notify,
}

struct State {
    /// Id → secret hash of every key seen in the store.
    known: HashMap<String, Vec<u8>>,
    /// Keys read recently, admitted without a read while fresh.
    verified: VerifiedKeys,
    /// The store's feed of key changes, applied before each lookup.
    watch: Option<KeyWatch>,
    /// When the whole list was last read; `None` before the first reload.
    listed_at: Option<Instant>,
    /// Id → when it was found missing; `order` holds the same entries oldest first.
    unknown: HashMap<String, Instant>,
    order: VecDeque<(String, Instant)>,
    window_start: Option<Instant>,
    /// Reads of this window that found nothing, and reads under way that may.
    misses: u32,
    pending: u32,
}

/// What the budget allows an id the gate does not know.
enum Reserve {
    Read(Read),
    /// Every read of the window is under way; one may yet find a key.
    Busy,
    /// The window's misses are spent.
    Spent,
}

/// The read to make for an id the gate does not know.
enum Read {
    /// The whole list: the first read of a window.
    List,
    /// The one row.
    Row,
}

impl KeyGate {
    /// A gate over `store` whose verified keys are fresh for `ttl`.
    pub fn new(store: Arc<dyn ApiKeyStore>, ttl: Duration) -> Self {
        let watch = store.watch_keys();
        Self {
            store,
            state: Mutex::new(State::new(ttl, Some(watch))),
            settled: tokio::sync::Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every change under the lock is a few map operations that cannot panic halfway.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The stored key `presented` names when its secret is right; see the module documentation
    /// for which calls read the store.
    pub async fn find(&self, presented: &PresentedKey<'_>) -> Result<Found, Error> {
        let id = presented.id;
        let (read, start) = loop {
            // Registered before the state is looked at, so a read settling in between still
            // wakes this call.
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            let (reserved, start) = {
                let mut state = self.state();
                state.hear_changes();
                let now = Instant::now();
                let start = state.verified.read_starts(now);
                if let Some(hash) = state.known.get(id) {
                    if !presented.matches(hash) {
                        return Ok(Found::Refused("wrong secret"));
                    }
                    if let Some(key) = state.verified.fresh(id, now) {
                        return Ok(Found::Key(key));
                    }
                    break (None, start);
                }
                if state.remembers_unknown(id, now) {
                    return Ok(Found::Refused("unknown key id (remembered)"));
                }
                (state.reserve_read(now), start)
            };
            match reserved {
                Reserve::Read(read) => break (Some(read), start),
                Reserve::Spent => return Ok(Found::Refused("unknown key id (read budget spent)")),
                // Every read of the budget is under way: one of them may be the whole list,
                // which finds this key too (many calls of a key made a moment ago arrive at
                // once). Wait for one to settle and look again, rather than refuse a key that
                // may well exist.
                Reserve::Busy => settled.await,
            }
        };
        let key = match read {
            None => {
                let key = self.store.find_key(id).await?;
                let mut state = self.state();
                state.verified.read_ended(id, start, key.as_ref());
                if key.is_none() {
                    // Deleted from the database by hand: forget it.
                    state.known.remove(id);
                }
                key
            }
            Some(read) => {
                let mut reservation = Reservation {
                    state: &self.state,
                    settled: &self.settled,
                    id,
                    started: Instant::now(),
                    found: None,
                };
                let key = self.read_unknown(id, read, reservation.started).await?;
                if let Some(key) = &key {
                    let mut state = self.state();
                    state.known.insert(key.id.clone(), key.secret_hash.clone());
                    state.verified.read_ended(id, start, Some(key));
                }
                reservation.found = Some(key.is_some());
                drop(reservation);
                key
            }
        };
        Ok(match key {
            None => Found::Refused("unknown key id"),
            Some(key) if presented.matches(&key.secret_hash) => Found::Key(Arc::new(key)),
            Some(_) => Found::Refused("wrong secret"),
        })
    }

    async fn read_unknown(
        &self,
        id: &str,
        read: Read,
        started: Instant,
    ) -> Result<Option<ApiKey>, Error> {
        match read {
            Read::Row => self.store.find_key(id).await,
            Read::List => {
                let keys = self.store.list_keys().await?;
                let mut state = self.state();
                state.known = keys
                    .iter()
                    .map(|key| (key.id.clone(), key.secret_hash.clone()))
                    .collect();
                state.listed_at = Some(started);
                Ok(keys.into_iter().find(|key| key.id == id))
            }
        }
    }
}

/// One read of the budget, settled when dropped: a read that found a key gives its place
/// back; one that found nothing counts as a miss and remembers the id; one that failed (so a
/// failing database is not hammered) or was abandoned (the caller went away) counts as a miss
/// but remembers nothing, since nothing was learnt about the id.
struct Reservation<'a> {
    state: &'a Mutex<State>,
    settled: &'a tokio::sync::Notify,
    id: &'a str,
    started: Instant,
    /// Whether the read found the key; `None` until it answered.
    found: Option<bool>,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.pending -= 1;
        if self.found != Some(true) {
            state.misses += 1;
        }
        if self.found == Some(false) {
            state.remember_unknown(self.id, self.started);
        }
        drop(state);
        self.settled.notify_waiters();
    }
}

impl State {
    fn new(ttl: Duration, watch: Option<KeyWatch>) -> Self {
        Self {
            known: HashMap::new(),
            verified: VerifiedKeys::new(ttl),
            watch,
            listed_at: None,
            unknown: HashMap::new(),
            order: VecDeque::new(),
            window_start: None,
            misses: 0,
            pending: 0,
        }
    }

    /// Applies every change the store's feed told of since the last lookup.
    fn hear_changes(&mut self) {
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        while let Some(change) = watch.next_change() {
            if let KeyChange::Key(id) = &change {
                // Made since it was looked for: look again.
                self.unknown.remove(id);
            }
            self.verified.hear(&change);
        }
    }

    fn remembers_unknown(&mut self, id: &str, now: Instant) -> bool {
        self.forget_expired(now);
        self.unknown.contains_key(id)
    }

    fn remember_unknown(&mut self, id: &str, at: Instant) {
        self.unknown.insert(id.to_owned(), at);
        self.order.push_back((id.to_owned(), at));
        self.forget_expired(Instant::now());
    }

    /// Drops entries older than [`WINDOW`] and, past [`MAX_UNKNOWN`], the oldest. Every entry
    /// lives equally long, so insertion order is expiry order and only the front is examined.
    fn forget_expired(&mut self, now: Instant) {
        while let Some((id, at)) = self.order.front() {
            let expired = now.saturating_duration_since(*at) >= WINDOW;
            if !expired && self.order.len() <= MAX_UNKNOWN {
                break;
            }
            // A later entry for the same id (after this one expired) is the one to keep.
            if self.unknown.get(id) == Some(at) {
                self.unknown.remove(id);
            }
            self.order.pop_front();
        }
    }

    /// Claims one read for an unknown id: [`Reserve::Spent`] when this window's misses are
    /// spent, [`Reserve::Busy`] while the reads under way could still spend them.
    fn reserve_read(&mut self, now: Instant) -> Reserve {
        let window_start = match self.window_start {
            Some(start) if now.saturating_duration_since(start) < WINDOW => start,
            _ => {
                self.window_start = Some(now);
                self.misses = 0;
                now
            }
        };
        if self.misses >= MISSES_PER_WINDOW {
            return Reserve::Spent;
        }
        // Reads under way count as misses until they find a key, so concurrent calls cannot
        // overshoot the budget.
        if self.misses + self.pending >= MISSES_PER_WINDOW {
            return Reserve::Busy;
        }
        self.pending += 1;
        Reserve::Read(match self.listed_at {
            Some(listed) if listed >= window_start => Read::Row,
            _ => Read::List,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::NewApiKey;

    fn state() -> State {
        State::new(Duration::from_secs(5), None)
    }

    #[test]
    fn unknown_ids_are_forgotten_after_the_window_and_bounded_in_number() {
        let mut state = state();
        let start = Instant::now();
        state.remember_unknown("a", start);
        assert!(state.remembers_unknown("a", start + WINDOW / 2));
        assert!(!state.remembers_unknown("a", start + WINDOW));
        for n in 0..MAX_UNKNOWN + 10 {
            state.remember_unknown(&format!("{n:016x}"), Instant::now());
        }
        assert_eq!(state.unknown.len(), MAX_UNKNOWN);
        assert_eq!(state.order.len(), MAX_UNKNOWN);
        assert!(!state.unknown.contains_key(&format!("{:016x}", 0)));
    }

    #[test]
    fn the_first_read_of_a_window_lists_and_misses_are_capped_per_window() {
        let mut state = state();
        let start = Instant::now();
        assert!(matches!(
            state.reserve_read(start),
            Reserve::Read(Read::List)
        ));
        state.listed_at = Some(start);
        for _ in 1..MISSES_PER_WINDOW {
            assert!(matches!(
                state.reserve_read(start),
                Reserve::Read(Read::Row)
            ));
        }
        assert!(
            matches!(state.reserve_read(start), Reserve::Busy),
            "every read is under way: wait for one"
        );
        // A read that found a key gives its place back.
        state.pending -= 1;
        assert!(matches!(state.reserve_read(start), Reserve::Read(_)));
        // Reads that found nothing spend it.
        state.misses = MISSES_PER_WINDOW;
        state.pending = 0;
        assert!(matches!(state.reserve_read(start), Reserve::Spent));
        // The next window starts with a list, even while reads of the last are under way.
        assert!(matches!(
            state.reserve_read(start + WINDOW),
            Reserve::Read(Read::List)
        ));
    }

    #[test]
    fn a_failed_read_spends_the_budget_but_does_not_mark_the_id_unknown() {
        let state = Mutex::new(state());
        let settled = tokio::sync::Notify::new();
        let now = Instant::now();
        let settle = |found: Option<bool>| {
            assert!(matches!(
                state.lock().unwrap().reserve_read(now),
                Reserve::Read(_)
            ));
            drop(Reservation {
                state: &state,
                settled: &settled,
                id: "0123456789abcdef",
                started: now,
                found,
            });
        };
        settle(None);
        assert_eq!(state.lock().unwrap().misses, 1);
        assert!(
            !state
                .lock()
                .unwrap()
                .remembers_unknown("0123456789abcdef", now)
        );
        settle(Some(true));
        assert_eq!(state.lock().unwrap().misses, 1);
        settle(Some(false));
        let mut after = state.lock().unwrap();
        assert_eq!((after.misses, after.pending), (2, 0));
        assert!(after.remembers_unknown("0123456789abcdef", now));
    }

    /// A key stored in `store`; its token.
    async fn stored_key(store: &dyn ApiKeyStore) -> (String, String) {
        let fresh = NewApiKey::generate().unwrap();
        let key = ApiKey {
            id: fresh.id.clone(),
            secret_hash: fresh.secret_hash.clone(),
            tenant: checkpointd_core::domain::TenantScope::All,
            role: checkpointd_core::domain::Role::Admin,
            name: "k".into(),
            created_at: std::time::SystemTime::now(),
            revoked_at: None,
        };
        store.create_key(&key).await.unwrap();
        (fresh.id, fresh.token)
    }

    #[tokio::test]
    async fn a_known_id_with_a_wrong_secret_is_refused_from_memory() {
        let store = Arc::new(checkpointd_storage::keys::MemoryKeys::new());
        let (id, token) = stored_key(store.as_ref()).await;
        let gate = KeyGate::new(store, Duration::from_secs(5));
        let good = PresentedKey::parse(&token).unwrap();
        assert!(matches!(gate.find(&good).await.unwrap(), Found::Key(_)));
        let wrong = format!("ckpt_{id}_{}", "0".repeat(64));
        let wrong = PresentedKey::parse(&wrong).unwrap();
        assert!(matches!(
            gate.find(&wrong).await.unwrap(),
            Found::Refused("wrong secret")
        ));
    }

    #[tokio::test]
    async fn a_revocation_the_store_tells_of_is_seen_on_the_next_lookup_despite_the_cache() {
        let store = Arc::new(checkpointd_storage::keys::MemoryKeys::new());
        let (id, token) = stored_key(store.as_ref()).await;
        let gate = KeyGate::new(store.clone(), Duration::from_secs(600));
        let good = PresentedKey::parse(&token).unwrap();
        let revoked_at = |found: Found| match found {
            Found::Key(key) => key.revoked_at,
            Found::Refused(why) => panic!("refused: {why}"),
        };
        assert_eq!(revoked_at(gate.find(&good).await.unwrap()), None);
        assert!(
            gate.state().verified.fresh(&id, Instant::now()).is_some(),
            "admitted from memory from now on"
        );
        store
            .revoke_key(&id, std::time::SystemTime::UNIX_EPOCH)
            .await
            .unwrap();
        assert!(revoked_at(gate.find(&good).await.unwrap()).is_some());
    }
}
