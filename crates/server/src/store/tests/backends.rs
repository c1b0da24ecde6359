//! The backends the behaviour suite runs on, each a [`TestBackend`], and one test module per
//! backend instantiating the whole suite.

use std::sync::Arc;

use tempfile::TempDir;

use super::{TestBackend, TestSchema};
use crate::domain::{RunKey, Step};
use crate::store::{
    CheckpointStore, InstrumentedStore, MemoryStore, PostgresStore, RetentionStore, SqliteStore,
};

/// A state no checkpoint in the suite was saved with.
const DAMAGED_STATE: &[u8] = b"\x00";

pub(crate) struct Memory(Arc<MemoryStore>);

impl TestBackend for Memory {
    async fn create() -> Self {
        Self(Arc::new(MemoryStore::new()))
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.0.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.0.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        self.0.overwrite_state(run, step, DAMAGED_STATE);
    }

    async fn damage_tool_output(&self, run: &RunKey, seq: u64) {
        self.0.overwrite_tool_output(run, seq, DAMAGED_STATE);
    }
}

/// A database file in a directory of its own, removed with the backend.
pub(crate) struct Sqlite {
    store: Arc<SqliteStore>,
    path: String,
    _dir: TempDir,
}

impl TestBackend for Sqlite {
    async fn create() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("checkpointd.db").display().to_string();
        let store = Arc::new(SqliteStore::open(&path).await.expect("open sqlite"));
        Self {
            store,
            path,
            _dir: dir,
        }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.store.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        let changed = rusqlite::Connection::open(&self.path)
            .expect("raw sqlite connection")
            .execute(
                "UPDATE checkpoints SET state = ?4 WHERE tenant = ?1 AND run_id = ?2 AND step = ?3",
                rusqlite::params![
                    run.tenant.as_str(),
                    run.run_id.as_str(),
                    step.as_i64(),
                    DAMAGED_STATE
                ],
            )
            .expect("damage a checkpoint");
        assert_eq!(changed, 1, "no checkpoint at step {step} to damage");
    }

    async fn damage_tool_output(&self, run: &RunKey, seq: u64) {
        let changed = rusqlite::Connection::open(&self.path)
            .expect("raw sqlite connection")
            .execute(
                "UPDATE tool_results SET output = ?4 WHERE tenant = ?1 AND run_id = ?2 AND seq = ?3",
                rusqlite::params![
                    run.tenant.as_str(),
                    run.run_id.as_str(),
                    seq as i64,
                    DAMAGED_STATE
                ],
            )
            .expect("damage a journal entry");
        assert_eq!(changed, 1, "no journal entry {seq} to damage");
    }
}

/// A schema of its own in the Postgres at `TEST_DATABASE_URL`.
pub(crate) struct Postgres {
    store: Arc<PostgresStore>,
    schema: TestSchema,
}

impl TestBackend for Postgres {
    async fn create() -> Self {
        let schema = TestSchema::create().await;
        let store = Arc::new(schema.store().await);
        Self { store, schema }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.store.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        let changed = super::raw_client(&self.schema.url())
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
        let changed = super::raw_client(&self.schema.url())
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
}

/// The instrumented wrapper around another backend's store.
pub(crate) struct Instrumented<B> {
    inner: B,
    store: Arc<dyn CheckpointStore>,
    retention: Arc<dyn RetentionStore>,
}

impl<B: TestBackend> TestBackend for Instrumented<B> {
    async fn create() -> Self {
        let inner = B::create().await;
        let store = Arc::new(InstrumentedStore::new(inner.store(), "test"));
        let retention = Arc::new(InstrumentedStore::new(inner.retention(), "test"));
        Self {
            inner,
            store,
            retention,
        }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.retention.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        self.inner.damage_state(run, step).await;
    }

    async fn damage_tool_output(&self, run: &RunKey, seq: u64) {
        self.inner.damage_tool_output(run, seq).await;
    }
}

mod memory {
    store_behaviours!(super::Memory);
}

mod sqlite {
    store_behaviours!(super::Sqlite);
}

mod postgres {
    store_behaviours!(super::Postgres);
}

mod instrumented_memory {
    store_behaviours!(super::Instrumented<super::Memory>);
}
