//! Postgres store, the source of truth in production.
//!
//! Layout: `sql` holds every statement, `migrate` the schema versions, `error` the SQLSTATE
//! mapping, `rows` the row conversions, `head_cache` the fast path's guess of each run row,
//! `batch` the group commit of concurrent Saves; `save`, `tools`, `reads` and `lifecycle`
//! implement the trait's methods. The task queue ([`crate::PostgresQueue`]) shares the
//! pool.
//!
//! Round trips are the cost that matters (a loopback trip is a sizeable share of a commit), so
//! statements are prepared once per connection, independent statements are pipelined on one
//! connection, a load is one statement, and a Save normally is one autocommit statement (see
//! `save`), shared with the other Saves in flight at the same moment (see `batch`).

mod batch;
mod head_cache;
mod journal;
mod lifecycle;
mod migrate;
mod reads;
mod retention;
mod rows;
mod save;
mod sql;
#[cfg(test)]
pub(crate) mod tests;
mod tool_batch;
mod tools;

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{
    Manager, ManagerConfig, Pool, PoolError, QueueMode, RecyclingMethod, Runtime,
};

use crate::key_listener::KeyFeed;
use crate::statements::{Learner, Statements};
use crate::{error, pooler_probe, tls};
use batch::SaveBatcher;
use checkpointd_core::domain::{
    CheckpointSummary, Epoch, IntentOutcome, JournalAction, ListQuery, MessageChain, NewCheckpoint,
    NewToolIntent, NewToolResult, RunId, RunInfo, RunKey, SavedCheckpoint, Step, Tenant,
    ToolRecord,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::JournalRewrite;
use checkpointd_core::secret::redact_url;
use checkpointd_storage::store::{
    CheckpointRef, CheckpointStore, DeletedCheckpoints, LatestHead, PostgresStatements,
    RetentionFacts, RetentionStore, Snapshot, StoreOptions, Which,
};
use head_cache::HeadCache;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long opening a connection may take. Short, so that a call made while Postgres is
/// unreachable fails with `Unavailable` in about this long instead of hanging.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a call waits for a free pooled connection before answering `Unavailable`.
const POOL_WAIT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long sent data may stay unacknowledged before the connection counts as dead.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `ping` (the health check) waits for `SELECT 1`.
const PING_TIMEOUT: Duration = Duration::from_secs(2);

pub struct PostgresStore {
    pool: Connections,
    /// Every statement goes through here: prepared and cached, or unnamed behind a pooler.
    pub(crate) statements: Statements,
    cache: HeadCache,
    batcher: SaveBatcher,
    /// Key changes, for the server's cache of verified keys.
    pub(crate) key_feed: KeyFeed,
}

impl PostgresStore {
    /// Connects a pool to `url` and applies migrations under an advisory lock.
    ///
    /// Fails with `Unavailable` when the database cannot be reached, so a misconfigured or
    /// absent database stops startup with a clear message.
    pub async fn connect(url: &str, options: &StoreOptions) -> Result<Self> {
        let (config, connector) = client_config(url)?;
        let key_feed = match (&options.listen_url, options.statements) {
            (Some(listen_url), _) => {
                let (config, connector) = client_config(listen_url)?;
                KeyFeed::listening(config, connector)
            }
            (None, PostgresStatements::Prepared) => {
                KeyFeed::listening(config.clone(), connector.clone())
            }
            // A transaction-mode pooler would run the LISTEN on a server connection it then
            // lends to others, and deliver nothing: caches resync on a timer instead.
            (None, PostgresStatements::Unnamed) => KeyFeed::polling(),
        };
        // For the connections of its own that the pooler probe and the type learner open.
        let (own_config, own_connector) = (config.clone(), connector.clone());
        // Fast recycling only checks that the connection task is alive: a connection that lost
        // its server is closed by then, and skipping a per-checkout ping saves a round trip on
        // every call. Dead connections are dropped and replaced, so the pool heals by itself
        // once Postgres is back.
        let manager = Manager::from_config(
            config,
            connector,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        // Last in, first out: a lightly loaded server keeps reusing the connection it used last,
        // whose backend process is awake and cache-warm, instead of cycling through every idle
        // one (measured: about 40 µs off a 10 KB Save once the pool had grown to 16).
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .queue_mode(QueueMode::Lifo)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|error| Error::internal_from("cannot build the postgres pool", error))?;
        let mut client = pool.get().await.map_err(|error| {
            Error::unavailable_from(
                format!("cannot reach postgres at {}", redact_url(url)),
                error,
            )
        })?;
        if options.statements == PostgresStatements::Prepared {
            pooler_probe::refuse_transaction_pooler(
                &own_config,
                own_connector.clone(),
                &redact_url(url),
            )
            .await?;
        }
        migrate::run(&mut client).await?;
        drop(client);
        let statements = Statements::new(
            options.statements,
            Learner {
                config: own_config,
                connector: own_connector,
            },
        );
        Ok(Self {
            pool: Connections {
                pool,
                statements: statements.clone(),
            },
            statements,
            cache: HeadCache::default(),
            batcher: SaveBatcher::new(),
            key_feed,
        })
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Client> {
        self.pool.get().await.map_err(error::pool)
    }

    /// Ends a locked write: commits a `Commit`, rolls back anything else, then caches the run
    /// row the transaction saw or wrote.
    ///
    /// The rollback is awaited rather than left to the transaction's Drop, so no lock outlives
    /// the answer: a caller that acts on a rejection at once, or a runtime that stops right
    /// after it, never finds the run row still locked by a connection sitting in the pool.
    async fn finish<T>(
        &self,
        tx: deadpool_postgres::Transaction<'_>,
        run: &RunKey,
        outcome: Result<Locked<T>>,
    ) -> Result<T> {
        match outcome {
            Ok(Locked::Commit(value, entry)) => {
                tx.commit().await.map_err(error::db)?;
                if let Some(entry) = entry {
                    self.cache.put(run, entry);
                }
                Ok(value)
            }
            Ok(Locked::Release(answer, entry)) => {
                tx.rollback().await.map_err(error::db)?;
                if let Some(entry) = entry {
                    self.cache.put(run, entry);
                }
                answer
            }
            Err(failure) => {
                // A rollback that fails too means the connection is gone, and with it the
                // transaction; the first error is the one worth reporting.
                let _ = tx.rollback().await;
                Err(failure)
            }
        }
    }
}

/// The driver's settings and TLS connector for `url`, with this crate's timeouts and name.
fn client_config(url: &str) -> Result<(tokio_postgres::Config, MakeRustlsConnect)> {
    let invalid = |error: &dyn std::fmt::Display| {
        Error::InvalidArgument(format!("invalid postgres url {}: {error}", redact_url(url)))
    };
    let (rest, tls) = tls::split(url).map_err(|error| invalid(&error))?;
    let (ssl_mode, connector) = tls::connector(&tls).map_err(|error| invalid(&error))?;
    let mut config: tokio_postgres::Config = rest.parse().map_err(|error| invalid(&error))?;
    config.ssl_mode(ssl_mode);
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    // An established connection to a server that stopped answering (a dead host, a dropped
    // route) would otherwise retransmit for many minutes; this fails it, and the pool
    // replaces it, once sent data stays unacknowledged this long.
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("checkpointd");
    }
    Ok((config, connector))
}

/// The pool with the statement layer, which travel together to whatever sends statements (the
/// group commit takes both).
#[derive(Clone)]
pub(crate) struct Connections {
    pool: Pool,
    statements: Statements,
}

impl Connections {
    pub(crate) async fn get(&self) -> std::result::Result<deadpool_postgres::Client, PoolError> {
        self.pool.get().await
    }
}

/// How a locked write ends.
enum Locked<T> {
    /// Commit, then answer with the value and cache the run row as written.
    Commit(T, Option<head_cache::CachedRun>),
    /// Write nothing (an identical retry, a known call id, or a rejection), then answer and
    /// cache the run row as read.
    Release(Result<T>, Option<head_cache::CachedRun>),
}

#[async_trait]
impl CheckpointStore for PostgresStore {
    async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> {
        self.save_checkpoint(checkpoint).await
    }

    async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)> {
        self.journal_tool_result(result).await
    }

    async fn record_tool_results(
        &self,
        results: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>> {
        self.journal_tool_results(results).await
    }

    async fn record_tool_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome> {
        self.journal_intent(intent).await
    }

    async fn rewrite_journal(&self, rewrite: &JournalRewrite) -> Result<Vec<Step>> {
        self.journal_rewrite(rewrite).await
    }

    async fn journal_actions(&self, run: &RunKey) -> Result<Vec<JournalAction>> {
        self.read_journal_actions(run).await
    }

    async fn load_window(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
        journal: checkpointd_core::domain::JournalScope,
    ) -> Result<Option<Snapshot>> {
        self.load_snapshot(run, which, window, journal).await
    }

    async fn window_stops_short(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
    ) -> Result<Option<Step>> {
        self.stops_short(run, which, window).await
    }

    async fn tools(&self, run: &RunKey) -> Result<Vec<ToolRecord>> {
        self.tool_journal(run).await
    }

    async fn steps(&self, run: &RunKey) -> Result<Vec<Step>> {
        self.checkpoint_steps(run).await
    }

    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()> {
        self.mark_quarantined(run, step, reason).await
    }

    async fn begin_resume(&self, run: &RunKey) -> Result<Epoch> {
        self.bump_epoch(run).await
    }

    async fn rewind(&self, run: &RunKey, epoch: Epoch, chain: MessageChain) -> Result<()> {
        self.truncate_log(run, epoch, chain).await
    }

    async fn list(&self, run: &RunKey, query: &ListQuery) -> Result<Vec<CheckpointSummary>> {
        self.list_page(run, query).await
    }

    async fn label_step(&self, run: &RunKey, label: &str) -> Result<Option<Step>> {
        self.step_of_label(run, label).await
    }

    async fn run_info(&self, run: &RunKey) -> Result<Option<RunInfo>> {
        self.read_run_info(run).await
    }

    async fn list_runs(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>> {
        self.run_page(tenant, prefix, after, limit).await
    }

    async fn run_exists(&self, run: &RunKey) -> Result<bool> {
        self.exists(run).await
    }

    async fn latest_head(&self, run: &RunKey) -> Result<Option<LatestHead>> {
        self.read_latest_head(run).await
    }

    async fn delete_run(&self, run: &RunKey) -> Result<u64> {
        self.remove_run(run).await
    }

    async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints> {
        self.remove_checkpoints(run, epoch, steps).await
    }

    async fn ping(&self) -> Result<()> {
        let check = async {
            let client = self.client().await?;
            client.simple_query("SELECT 1").await.map_err(error::db)?;
            Ok(())
        };
        tokio::time::timeout(PING_TIMEOUT, check)
            .await
            .unwrap_or_else(|_| {
                Err(Error::unavailable(format!(
                    "postgres did not answer within {PING_TIMEOUT:?}"
                )))
            })
    }
}

#[async_trait]
impl RetentionStore for PostgresStore {
    async fn set_retention(&self, run: &RunKey, policy: Option<&str>) -> Result<()> {
        self.store_retention(run, policy).await
    }

    async fn pin(&self, run: &RunKey, step: Option<Step>, source: &str) -> Result<Option<Step>> {
        self.add_pin(run, step, source).await
    }

    async fn unpin(&self, run: &RunKey, step: Option<Step>, source: Option<&str>) -> Result<u64> {
        self.remove_pins(run, step, source).await
    }

    async fn retention_facts(&self, run: &RunKey) -> Result<Option<RetentionFacts>> {
        self.read_retention_facts(run).await
    }

    async fn runs_after(
        &self,
        after: Option<&RunKey>,
        limit: usize,
        with_policy_only: bool,
    ) -> Result<Vec<RunKey>> {
        self.run_keys_after(after, limit, with_policy_only).await
    }

    async fn prune(&self, run: &RunKey, epoch: Epoch, steps: &[Step]) -> Result<u64> {
        self.delete_checkpoints(run, epoch, steps).await
    }

    async fn checkpoints_after(
        &self,
        tenant: Option<&Tenant>,
        after: Option<&CheckpointRef>,
        limit: usize,
    ) -> Result<Vec<CheckpointRef>> {
        self.checkpoint_refs_after(tenant, after, limit).await
    }
}
