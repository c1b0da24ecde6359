//! For tests in any crate: the testkit's Postgres schema per test (or database per test behind
//! PgBouncer in transaction mode), with the store opened on it, and the Postgres store as a
//! [`TestBackend`] of the behaviour suite, directly and behind the pooler.
//!
//! Tests using it run on a multi-threaded runtime, so connection tasks keep running while a
//! schema's Drop blocks a thread: on one thread, a connection still holding a lock (say, a
//! dropped pool whose connection tasks have not been polled yet) would make DROP SCHEMA wait.

use std::sync::Arc;

use checkpointd_core::domain::{RunKey, Step};
use checkpointd_storage::store::tests::{DAMAGED_DIGEST, DAMAGED_STATE, Damage, TestBackend};
use checkpointd_storage::store::{CheckpointStore, RetentionStore};
use checkpointd_testkit::{PgSchema, PooledDatabase};

use checkpointd_storage::store::{PostgresStatements, StoreOptions};

use crate::PostgresStore;

pub use checkpointd_testkit::connect_or_panic as raw_client;

/// Set to `1` to distribute each test schema after migrating it: `TEST_DATABASE_URL` is then a
/// Citus coordinator. Tables a test recreates by migration are distributed again on its next
/// `store()`, since distributing skips tables Citus already knows.
pub const DISTRIBUTE: &str = "TEST_CITUS_DISTRIBUTE";

/// A schema created for one test (or a database, behind the transaction pooler), dropped when
/// the test ends (even by panic).
pub struct TestSchema(Place);

enum Place {
    Schema(PgSchema),
    Pooled(PooledDatabase),
}

impl TestSchema {
    pub async fn create() -> Self {
        Self(Place::Schema(PgSchema::create().await))
    }

    /// A database of its own behind PgBouncer in transaction mode, whose store sends
    /// `--postgres-statements unnamed`; panics when `TEST_PGBOUNCER_*_URL` are unset.
    pub async fn behind_transaction_pooler() -> Self {
        Self(Place::Pooled(PooledDatabase::create().await))
    }

    /// Where the store connects.
    pub fn url(&self) -> String {
        match &self.0 {
            Place::Schema(schema) => schema.url(),
            Place::Pooled(database) => database.transaction_url(),
        }
    }

    /// Where a test's own SQL goes: the store's URL, or behind a transaction pooler the
    /// session pooler, which keeps the named statements a raw client prepares.
    pub fn raw_url(&self) -> String {
        match &self.0 {
            Place::Schema(schema) => schema.url(),
            Place::Pooled(database) => database.session_url(),
        }
    }

    /// The store options a test's store gets here.
    ///
    /// Behind the transaction pooler: unnamed statements, and the key listener on the session
    /// pooler, as docs/deploy.md sets a deployment up.
    pub fn options(&self, pool_size: usize) -> StoreOptions {
        let (statements, listen_url) = match &self.0 {
            Place::Schema(_) => (PostgresStatements::Prepared, None),
            Place::Pooled(database) => (PostgresStatements::Unnamed, Some(database.session_url())),
        };
        StoreOptions {
            pool_size,
            statements,
            listen_url,
        }
    }

    /// A store connected to this schema, migrated on connect; and distributed by tenant when
    /// [`DISTRIBUTE`] is set, for running the suites on a Citus coordinator (docs/deploy.md).
    pub async fn store(&self) -> PostgresStore {
        let store = PostgresStore::connect(&self.url(), &self.options(4))
            .await
            .unwrap_or_else(|error| panic!("connect to {}: {error}", self.url()));
        if std::env::var_os(DISTRIBUTE).is_some_and(|value| value == "1") {
            store
                .distribute()
                .await
                .unwrap_or_else(|error| panic!("distribute {}: {error}", self.url()));
        }
        store
    }

    /// Runs statements inside the schema, bypassing the store.
    pub async fn sql(&self, statement: &str) {
        raw_client(&self.raw_url())
            .await
            .batch_execute(statement)
            .await
            .unwrap_or_else(|error| panic!("raw sql failed: {error}: {statement}"));
    }
}

/// How a [`PostgresBackend`] reaches Postgres.
pub trait Route: Send + Sync + 'static {
    fn schema() -> impl std::future::Future<Output = TestSchema> + Send;
}

/// Straight to `TEST_DATABASE_URL`, named statements prepared once per connection.
pub struct Direct;

impl Route for Direct {
    async fn schema() -> TestSchema {
        TestSchema::create().await
    }
}

/// Through PgBouncer in transaction mode, with unnamed statements.
pub struct TransactionPooler;

impl Route for TransactionPooler {
    async fn schema() -> TestSchema {
        TestSchema::behind_transaction_pooler().await
    }
}

/// A schema of its own in the Postgres at `TEST_DATABASE_URL` (or a database behind the
/// transaction pooler).
pub struct PostgresBackend<R: Route = Direct> {
    store: Arc<PostgresStore>,
    schema: TestSchema,
    route: std::marker::PhantomData<R>,
}

impl<R: Route> TestBackend for PostgresBackend<R> {
    async fn create() -> Self {
        let schema = R::schema().await;
        let store = Arc::new(schema.store().await);
        Self {
            store,
            schema,
            route: std::marker::PhantomData,
        }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.store.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        let changed = raw_client(&self.schema.raw_url())
            .await
            .execute(
                "UPDATE checkpoints SET state = $4 WHERE tenant = $1 AND run_id = $2 AND step = $3",
                &[
                    &run.tenant.as_str(),
                    &run.run_id.as_str(),
                    &step.as_i64(),
                    &DAMAGED_STATE,
                ],
            )
            .await
            .expect("damage a checkpoint");
        assert_eq!(changed, 1, "no checkpoint at step {step} to damage");
    }

    async fn damage_tool_output(&self, run: &RunKey, seq: u64) {
        let changed = raw_client(&self.schema.raw_url())
            .await
            .execute(
                "UPDATE tool_results SET output = $4 WHERE tenant = $1 AND run_id = $2 AND seq = $3",
                &[
                    &run.tenant.as_str(),
                    &run.run_id.as_str(),
                    &(seq as i64),
                    &DAMAGED_STATE,
                ],
            )
            .await
            .expect("damage a journal entry");
        assert_eq!(changed, 1, "no journal entry {seq} to damage");
    }

    async fn damage(&self, run: &RunKey, damage: Damage) {
        let (sql, seq, value): (&str, u64, &[u8]) = match damage {
            Damage::ToolChain(seq) => ("UPDATE tool_results SET chain", seq, &DAMAGED_DIGEST),
            Damage::MessageContent(seq) => ("UPDATE messages SET content", seq, DAMAGED_STATE),
            Damage::MessageChain(seq) => ("UPDATE messages SET chain", seq, &DAMAGED_DIGEST),
        };
        let changed = raw_client(&self.schema.raw_url())
            .await
            .execute(
                &format!("{sql} = $4 WHERE tenant = $1 AND run_id = $2 AND seq = $3"),
                &[
                    &run.tenant.as_str(),
                    &run.run_id.as_str(),
                    &(seq as i64),
                    &value,
                ],
            )
            .await
            .expect("damage a row");
        assert_eq!(changed, 1, "no row to damage for {damage:?}");
    }
}
