//! SQLite store, the embedded default: one database file, WAL mode, every write durable on
//! return.
//!
//! Layout: `schema` opens connections and applies `migrations/sqlite/`, `write` and `read` hold
//! the queries, `codec` converts values, `error` classifies driver errors. The rules of each
//! write live in [`checkpointd_core::plan`]; this module only reads their context and applies them.
//! The task queue ([`crate::SqliteQueue`]) shares this file and these connections.
//!
//! rusqlite is synchronous, so every call runs on tokio's blocking pool. Writes go through one
//! connection behind a mutex (SQLite admits one writer at a time anyway, and in-process
//! queueing is cheaper than spinning on `SQLITE_BUSY`); reads use a second, read-only
//! connection so loads do not wait behind a Save's fsync.

mod journal;
mod journal_window;
mod read;
mod retention;
mod schema;
mod window_size;
mod write;

#[cfg(test)]
pub(crate) mod tests;

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use rusqlite::{Connection, TransactionBehavior};

use crate::error::DbResultExt;
use checkpointd_core::domain::{
    CheckpointSummary, Epoch, IntentOutcome, JournalAction, ListQuery, MessageChain, NewCheckpoint,
    NewToolIntent, NewToolResult, RunId, RunInfo, RunKey, SavedCheckpoint, Step, Tenant,
    ToolRecord,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::JournalRewrite;
use checkpointd_storage::store::{
    CheckpointRef, CheckpointStore, DeletedCheckpoints, LatestHead, RetentionFacts, RetentionStore,
    Snapshot, Which,
};

/// A handle to one SQLite database; cheap to share behind an `Arc`.
pub struct SqliteStore {
    connections: Arc<Connections>,
    /// Keys created and revoked through this handle, for the server's cache of verified keys.
    pub(crate) key_changes: checkpointd_storage::keys::KeyChanges,
}

struct Connections {
    writer: Mutex<Connection>,
    /// `None` for an in-memory database, which a second connection could not see.
    reader: Option<Mutex<Connection>>,
}

impl Connections {
    fn writer(&self) -> MutexGuard<'_, Connection> {
        lock(&self.writer)
    }

    fn reader(&self) -> MutexGuard<'_, Connection> {
        lock(self.reader.as_ref().unwrap_or(&self.writer))
    }
}

/// A poisoned lock means a panic while the connection was held; rusqlite rolled back the open
/// transaction while unwinding, so the connection is still usable.
fn lock(mutex: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path` and applies migrations.
    ///
    /// `path` is what follows `sqlite://` in the database URL; missing parent directories are
    /// created. `:memory:` gives a private in-memory database.
    pub async fn open(path: &str) -> Result<Self> {
        let path = path.to_owned();
        let connections = tokio::task::spawn_blocking(move || -> Result<Connections> {
            let writer = schema::open_writer(&path)?;
            let reader = if schema::is_memory(&path) {
                None
            } else {
                Some(Mutex::new(schema::open_reader(&path)?))
            };
            Ok(Connections {
                writer: Mutex::new(writer),
                reader,
            })
        })
        .await
        .map_err(joined)??;
        Ok(Self {
            connections: Arc::new(connections),
            key_changes: checkpointd_storage::keys::KeyChanges::new(),
        })
    }

    /// Runs `work` with the writer connection on the blocking pool.
    pub(crate) async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let connections = Arc::clone(&self.connections);
        tokio::task::spawn_blocking(move || work(&mut connections.writer()))
            .await
            .map_err(joined)?
    }

    /// Runs `work` with the read connection on the blocking pool.
    pub(crate) async fn read<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let connections = Arc::clone(&self.connections);
        tokio::task::spawn_blocking(move || work(&mut connections.reader()))
            .await
            .map_err(joined)?
    }
}

/// A blocking task that panicked or was cancelled at shutdown.
fn joined(error: tokio::task::JoinError) -> Error {
    Error::internal_from("sqlite task failed", error)
}

#[async_trait]
impl CheckpointStore for SqliteStore {
    async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> {
        // The blocking pool needs owned data; the copy is small next to the fsync that follows.
        let checkpoint = checkpoint.clone();
        self.write(move |conn| write::save(conn, &checkpoint)).await
    }

    async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)> {
        let result = result.clone();
        self.write(move |conn| journal::record_tool_result(conn, &result))
            .await
    }

    async fn record_tool_results(
        &self,
        results: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>> {
        let results = results.to_vec();
        self.write(move |conn| journal::record_tool_results(conn, &results))
            .await
    }

    async fn record_tool_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome> {
        let intent = intent.clone();
        self.write(move |conn| journal::record_tool_intent(conn, &intent))
            .await
    }

    async fn rewrite_journal(&self, rewrite: &JournalRewrite) -> Result<Vec<Step>> {
        let rewrite = rewrite.clone();
        self.write(move |conn| journal::rewrite_journal(conn, &rewrite))
            .await
    }

    async fn journal_actions(&self, run: &RunKey) -> Result<Vec<JournalAction>> {
        let run = run.clone();
        self.read(move |conn| journal::journal_actions(conn, &run))
            .await
    }

    async fn window_stops_short(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
    ) -> Result<Option<Step>> {
        let run = run.clone();
        self.read(move |conn| window_size::window_stops_short(conn, &run, which, window))
            .await
    }

    async fn load_window(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
        journal: checkpointd_core::domain::JournalScope,
    ) -> Result<Option<Snapshot>> {
        let run = run.clone();
        self.read(move |conn| {
            // One read transaction, so the checkpoint, its messages and the journal come from
            // the same committed state even if a Save commits in between.
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Deferred)
                .db()?;
            let Some((checkpoint, has_newer)) = read::checkpoint(&tx, &run, which, window)? else {
                return Ok(None);
            };
            let (tools, tool_window) =
                journal_window::read(&tx, &run, journal, checkpoint.step, checkpoint.tool_count)?;
            Ok(Some(Snapshot {
                checkpoint,
                tools,
                tool_window,
                verified: false,
                has_newer,
            }))
        })
        .await
    }

    async fn tools(&self, run: &RunKey) -> Result<Vec<ToolRecord>> {
        let run = run.clone();
        self.read(move |conn| read::tools(conn, &run)).await
    }

    async fn steps(&self, run: &RunKey) -> Result<Vec<Step>> {
        let run = run.clone();
        self.read(move |conn| read::steps(conn, &run)).await
    }

    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()> {
        let (run, reason) = (run.clone(), reason.to_owned());
        self.write(move |conn| write::quarantine(conn, &run, step, &reason))
            .await
    }

    async fn begin_resume(&self, run: &RunKey) -> Result<Epoch> {
        let run = run.clone();
        self.write(move |conn| write::begin_resume(conn, &run))
            .await
    }

    async fn rewind(&self, run: &RunKey, epoch: Epoch, chain: MessageChain) -> Result<()> {
        let run = run.clone();
        self.write(move |conn| write::rewind(conn, &run, epoch, chain))
            .await
    }

    async fn list(&self, run: &RunKey, query: &ListQuery) -> Result<Vec<CheckpointSummary>> {
        let (run, query) = (run.clone(), query.clone());
        self.read(move |conn| read::list(conn, &run, &query)).await
    }

    async fn label_step(&self, run: &RunKey, label: &str) -> Result<Option<Step>> {
        let (run, label) = (run.clone(), label.to_owned());
        self.read(move |conn| read::label_step(conn, &run, &label))
            .await
    }

    async fn run_info(&self, run: &RunKey) -> Result<Option<RunInfo>> {
        let run = run.clone();
        self.read(move |conn| read::run_info(conn, &run)).await
    }

    async fn list_runs(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>> {
        let (tenant, prefix, after) = (tenant.clone(), prefix.to_owned(), after.cloned());
        self.read(move |conn| read::list_runs(conn, &tenant, &prefix, after.as_ref(), limit))
            .await
    }

    async fn run_exists(&self, run: &RunKey) -> Result<bool> {
        let run = run.clone();
        self.read(move |conn| read::run_exists(conn, &run)).await
    }

    async fn latest_head(&self, run: &RunKey) -> Result<Option<LatestHead>> {
        let run = run.clone();
        self.read(move |conn| read::latest_head(conn, &run)).await
    }

    async fn delete_run(&self, run: &RunKey) -> Result<u64> {
        let run = run.clone();
        self.write(move |conn| write::delete_run(conn, &run)).await
    }

    async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints> {
        let (run, steps) = (run.clone(), steps.to_vec());
        self.write(move |conn| write::delete_checkpoints(conn, &run, epoch, &steps))
            .await
    }

    async fn ping(&self) -> Result<()> {
        // Reads the schema and a real table, so a vanished or unreadable file shows up here.
        self.read(|conn| {
            conn.query_row(
                "SELECT COALESCE(MAX(version), 0) FROM checkpointd_migrations",
                [],
                |row| row.get::<_, i64>(0),
            )
            .db()
            .map(drop)
        })
        .await
    }
}

#[async_trait]
impl RetentionStore for SqliteStore {
    async fn set_retention(&self, run: &RunKey, policy: Option<&str>) -> Result<()> {
        let (run, policy) = (run.clone(), policy.map(str::to_owned));
        self.write(move |conn| retention::set_retention(conn, &run, policy.as_deref()))
            .await
    }

    async fn pin(&self, run: &RunKey, step: Option<Step>, source: &str) -> Result<Option<Step>> {
        let (run, source) = (run.clone(), source.to_owned());
        self.write(move |conn| retention::pin(conn, &run, step, &source))
            .await
    }

    async fn unpin(&self, run: &RunKey, step: Option<Step>, source: Option<&str>) -> Result<u64> {
        let (run, source) = (run.clone(), source.map(str::to_owned));
        self.write(move |conn| retention::unpin(conn, &run, step, source.as_deref()))
            .await
    }

    async fn retention_facts(&self, run: &RunKey) -> Result<Option<RetentionFacts>> {
        let run = run.clone();
        self.read(move |conn| retention::retention_facts(conn, &run))
            .await
    }

    async fn runs_after(
        &self,
        after: Option<&RunKey>,
        limit: usize,
        with_policy_only: bool,
    ) -> Result<Vec<RunKey>> {
        let after = after.cloned();
        self.read(move |conn| retention::runs_after(conn, after.as_ref(), limit, with_policy_only))
            .await
    }

    async fn prune(&self, run: &RunKey, epoch: Epoch, steps: &[Step]) -> Result<u64> {
        let (run, steps) = (run.clone(), steps.to_vec());
        self.write(move |conn| retention::prune(conn, &run, epoch, &steps))
            .await
    }

    async fn checkpoints_after(
        &self,
        tenant: Option<&Tenant>,
        after: Option<&CheckpointRef>,
        limit: usize,
    ) -> Result<Vec<CheckpointRef>> {
        let (tenant, after) = (tenant.cloned(), after.cloned());
        self.read(move |conn| {
            retention::checkpoints_after(conn, tenant.as_ref(), after.as_ref(), limit)
        })
        .await
    }
}
