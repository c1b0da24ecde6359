//! Counters of what the cache did, read by metrics and tests.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::telemetry::metrics;

/// Monotonic counters; every lookup lands in exactly one of the first five.
#[derive(Debug, Default)]
pub struct CacheStats {
    /// Served from Redis after matching the store's head and the checksum.
    pub hits: AtomicU64,
    /// Redis held nothing for the run.
    pub misses: AtomicU64,
    /// Redis held an entry the store has moved past (or never had).
    pub stale: AtomicU64,
    /// Redis held an entry that failed to decode or to verify; it was dropped.
    pub corrupt: AtomicU64,
    /// Redis was unreachable or answered late, so the store answered alone.
    pub bypassed: AtomicU64,
    /// Entries not cached because they exceed the size threshold.
    pub skipped_large: AtomicU64,
    /// Cache writes dropped because Redis was down or the write queue was full.
    pub writes_dropped: AtomicU64,
}

/// A point-in-time copy of [`CacheStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheCounts {
    pub hits: u64,
    pub misses: u64,
    pub stale: u64,
    pub corrupt: u64,
    pub bypassed: u64,
    pub skipped_large: u64,
    pub writes_dropped: u64,
}

/// How one lookup ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    Miss,
    Stale,
    Corrupt,
    Bypassed,
}

impl CacheStats {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a lookup here and in the exported metrics.
    pub fn record(&self, lookup: Lookup) {
        let counter = match lookup {
            Lookup::Hit => &self.hits,
            Lookup::Miss => &self.misses,
            Lookup::Stale => &self.stale,
            Lookup::Corrupt => &self.corrupt,
            Lookup::Bypassed => &self.bypassed,
        };
        Self::bump(counter);
        match lookup {
            Lookup::Bypassed => metrics::record_cache_bypass(),
            lookup => metrics::record_cache_lookup(lookup == Lookup::Hit),
        }
    }

    pub fn counts(&self) -> CacheCounts {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        CacheCounts {
            hits: read(&self.hits),
            misses: read(&self.misses),
            stale: read(&self.stale),
            corrupt: read(&self.corrupt),
            bypassed: read(&self.bypassed),
            skipped_large: read(&self.skipped_large),
            writes_dropped: read(&self.writes_dropped),
        }
    }
}
