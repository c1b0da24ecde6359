//! An in-process cache of each run's row, which lets a Save plan without reading the database.
//!
//! The cache is only ever a guess: the fast path's statement is conditional on the run row being
//! exactly the cached version, so a stale entry (another instance wrote, a row was edited by
//! hand) costs one extra round trip and never a wrong answer. That is why several instances may
//! share a database with no invalidation protocol between them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use checkpointd_core::domain::{RunKey, Step};
use checkpointd_core::plan::RunHead;

/// How many runs the cache remembers; a save on a forgotten run takes the slow path once.
const CAPACITY: usize = 16_384;

/// A run row as of one version, plus what the database held then about its checkpoints.
#[derive(Clone, Copy, Debug)]
pub(super) struct CachedRun {
    pub head: RunHead,
    /// The row's version (see the `runs` table): strictly increasing with every write.
    pub updated_at: SystemTime,
    /// The highest non-quarantined step at this version, when known: `Some(None)` means "known:
    /// no checkpoint", `None` means "not read", which sends Saves to the slow path. A later
    /// quarantine can only lower the truth, which keeps a cached value a safe upper bound.
    pub latest_step: Option<Option<Step>>,
}

#[derive(Debug, Default)]
pub(super) struct HeadCache {
    runs: Mutex<HashMap<RunKey, CachedRun>>,
}

impl HeadCache {
    pub fn get(&self, run: &RunKey) -> Option<CachedRun> {
        self.lock().get(run).copied()
    }

    /// Remembers a version of the run. The last writer wins even if its version is older (two
    /// writers of one run finishing out of order): that costs one failed fast path, whereas
    /// refusing older versions could pin a stale entry forever after a run is deleted and
    /// recreated by a host whose clock is behind.
    pub fn put(&self, run: &RunKey, entry: CachedRun) {
        let mut runs = self.lock();
        if let Some(known) = runs.get_mut(run) {
            *known = entry;
            return;
        }
        if runs.len() >= CAPACITY {
            // Evicting an arbitrary entry is enough: a miss only costs the slow path once.
            if let Some(victim) = runs.keys().next().cloned() {
                runs.remove(&victim);
            }
        }
        runs.insert(run.clone(), entry);
    }

    pub fn forget(&self, run: &RunKey) {
        self.lock().remove(run);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RunKey, CachedRun>> {
        // The map holds plain values, so a panic elsewhere cannot leave it half-updated.
        self.runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
