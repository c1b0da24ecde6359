//! Storage: the `CheckpointStore` contract and its backends (memory, SQLite, Postgres).

mod instrumented;
mod memory;
pub mod plan;
mod postgres;
mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;

pub use instrumented::InstrumentedStore;
pub use memory::MemoryStore;
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

use crate::domain::{
    CheckpointSummary, MessageChain, NewCheckpoint, NewToolResult, RunKey, SavedCheckpoint, Step,
    StoredCheckpoint, ToolRecord,
};
use crate::error::{Error, Result};
use crate::queue::{MemoryQueue, TaskQueue};

/// Which checkpoint [`CheckpointStore::load`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The highest-step checkpoint that is not quarantined, below the given step if any.
    LatestBelow(Option<Step>),
    /// The checkpoint at exactly this step, quarantined or not.
    At(Step),
}

/// A checkpoint with the run's whole tool journal, read in one consistent snapshot.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub checkpoint: StoredCheckpoint,
    /// Every journalled tool result of the run, in journal order.
    pub tools: Vec<ToolRecord>,
}

/// A durable home for checkpoints, message logs and tool journals.
///
/// Every method is scoped to one tenant's run and never reads across tenants. Backends store
/// and fetch; the rules (what a Save may do, what counts as valid) live in [`plan`] and in
/// [`crate::engine`], so every backend keeps them identically.
#[async_trait]
pub trait CheckpointStore: Send + Sync + 'static {
    /// Stores a checkpoint, or recognises an identical retry.
    ///
    /// In one transaction that locks the run: read the [`plan::SaveContext`], call
    /// [`plan::plan_save`], and apply the plan. Returns only after the commit, so an
    /// acknowledged checkpoint survives a crash. A rejected request changes nothing.
    async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint>;

    /// Journals a tool result, or returns the stored one for a known call id (`true` then).
    ///
    /// Same shape as `save`: lock the run, read the context, [`plan::plan_tool_result`], apply.
    async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)>;

    /// Reads one checkpoint with the messages it covers and the run's tool journal.
    ///
    /// Performs no verification: the engine verifies what it restores. `None` when no
    /// checkpoint matches.
    async fn load(&self, run: &RunKey, which: Which) -> Result<Option<Snapshot>>;

    /// The run's whole tool journal, in journal order.
    async fn tools(&self, run: &RunKey) -> Result<Vec<ToolRecord>>;

    /// Every step that has a checkpoint, ascending.
    async fn steps(&self, run: &RunKey) -> Result<Vec<Step>>;

    /// Marks a checkpoint as corrupt so it is never restored. Idempotent; keeps the first reason.
    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()>;

    /// Creates the run if needed and bumps its fencing epoch; returns the new epoch.
    async fn begin_resume(&self, run: &RunKey) -> Result<u64>;

    /// Truncates the message log to `chain.len` messages and makes `chain` its head, provided
    /// the run is still at `epoch`; otherwise `FailedPrecondition`.
    async fn rewind(&self, run: &RunKey, epoch: u64, chain: MessageChain) -> Result<()>;

    /// Up to `limit` checkpoint summaries with step after `after`, ascending.
    async fn list(
        &self,
        run: &RunKey,
        after: Option<Step>,
        limit: usize,
    ) -> Result<Vec<CheckpointSummary>>;

    /// Whether the run exists (has been saved to, journalled into or resumed).
    async fn run_exists(&self, run: &RunKey) -> Result<bool>;

    /// Deletes a run and everything under it; returns how many checkpoints went.
    async fn delete_run(&self, run: &RunKey) -> Result<u64>;

    /// Checks that the backing database answers.
    async fn ping(&self) -> Result<()>;
}

/// Opens the store a `--database` URL names: `memory://`, `sqlite://PATH` or `postgres://...`.
pub async fn open(url: &str, options: &StoreOptions) -> Result<Arc<dyn CheckpointStore>> {
    Ok(open_with_queue(url, options).await?.store)
}

/// A checkpoint store and the task queue that shares its database.
#[derive(Clone)]
pub struct Opened {
    pub store: Arc<dyn CheckpointStore>,
    pub queue: Arc<dyn TaskQueue>,
}

/// Opens the store and the queue a `--database` URL names; both live in the same database.
pub async fn open_with_queue(url: &str, options: &StoreOptions) -> Result<Opened> {
    if url == "memory://" || url == "memory:" {
        return Ok(Opened {
            store: InstrumentedStore::wrap(Arc::new(MemoryStore::new()), "memory"),
            queue: Arc::new(MemoryQueue::new()),
        });
    }
    if let Some(path) = url.strip_prefix("sqlite://") {
        let store = Arc::new(SqliteStore::open(path).await?);
        return Ok(Opened {
            store: InstrumentedStore::wrap(store.clone(), "sqlite"),
            queue: store,
        });
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = Arc::new(PostgresStore::connect(url, options).await?);
        return Ok(Opened {
            store: InstrumentedStore::wrap(store.clone(), "postgresql"),
            queue: store,
        });
    }
    Err(Error::InvalidArgument(format!(
        "unsupported database url {:?}: use memory://, sqlite://PATH or postgres://...",
        redact_url(url)
    )))
}

/// Backend settings that come from configuration.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Connections in the Postgres pool.
    pub pool_size: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self { pool_size: 16 }
    }
}

/// Drops the password from a database URL so it can be logged or shown.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.find(':') {
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme_end + 3],
                    &credentials[..colon],
                    &url[at..]
                ),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn redact_url_hides_only_the_password() {
        assert_eq!(
            super::redact_url("postgres://app:s3cret@db:5432/x"),
            "postgres://app:***@db:5432/x"
        );
        assert_eq!(
            super::redact_url("postgres://app@db/x"),
            "postgres://app@db/x"
        );
        assert_eq!(
            super::redact_url("sqlite:///tmp/a.db"),
            "sqlite:///tmp/a.db"
        );
    }
}
