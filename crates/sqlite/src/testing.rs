//! For tests in any crate: the SQLite store as a [`TestBackend`] of the behaviour suite, and a
//! database file to reopen and tamper with.

use std::sync::Arc;

use checkpointd_core::domain::{Message, NewCheckpoint, RunKey, Step};
use checkpointd_storage::store::tests::{DAMAGED_DIGEST, DAMAGED_STATE, Damage, TestBackend};
use checkpointd_storage::store::{CheckpointStore, RetentionStore};
use tempfile::TempDir;

use crate::SqliteStore;

/// A database file in a directory of its own, removed with the backend.
pub struct SqliteBackend {
    store: Arc<SqliteStore>,
    path: String,
    _dir: TempDir,
}

impl TestBackend for SqliteBackend {
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

    async fn damage(&self, run: &RunKey, damage: Damage) {
        let (sql, seq, value): (&str, u64, &[u8]) = match damage {
            Damage::ToolChain(seq) => ("UPDATE tool_results SET chain", seq, &DAMAGED_DIGEST),
            Damage::MessageContent(seq) => ("UPDATE messages SET content", seq, DAMAGED_STATE),
            Damage::MessageChain(seq) => ("UPDATE messages SET chain", seq, &DAMAGED_DIGEST),
        };
        let changed = rusqlite::Connection::open(&self.path)
            .expect("raw sqlite connection")
            .execute(
                &format!("{sql} = ?4 WHERE tenant = ?1 AND run_id = ?2 AND seq = ?3"),
                rusqlite::params![run.tenant.as_str(), run.run_id.as_str(), seq as i64, value],
            )
            .expect("damage a row");
        assert_eq!(changed, 1, "no row to damage for {damage:?}");
    }
}

pub struct Db {
    dir: TempDir,
}

impl Default for Db {
    fn default() -> Self {
        Self::new()
    }
}

impl Db {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// A path under a directory that does not exist yet, so `open` must create it.
    fn path(&self) -> String {
        self.dir
            .path()
            .join("nested/dir/checkpointd.db")
            .display()
            .to_string()
    }

    pub async fn open(&self) -> SqliteStore {
        SqliteStore::open(&self.path()).await.expect("open")
    }

    /// A raw connection for tampering, as an operator or a bad disk would.
    pub fn raw(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path()).expect("raw connection")
    }
}

/// The suite's Save with messages of the test's choosing.
pub fn checkpoint(run: &RunKey, step: u64, offset: u64, messages: Vec<Message>) -> NewCheckpoint {
    NewCheckpoint {
        messages,
        ..checkpointd_storage::store::tests::checkpoint(run, step, offset, &[])
    }
}
