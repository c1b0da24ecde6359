//! The SQLite side of the queue suite: its [`TestBackend`], and what only SQLite shows: the
//! columns as the file holds them.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use tempfile::TempDir;

use super::task_row::insert_params;
use super::{INSERT_TASK, SqliteQueue};
use crate::SqliteStore;
use crate::codec::{from_micros, to_micros};
use checkpointd_core::domain::Tenant;
use checkpointd_storage::queue::tests::{TestBackend, write_column_samples};
use checkpointd_storage::queue::{Task, TaskQueue};

/// A database file in a directory of its own, removed with it.
pub(crate) struct SqliteBackend {
    dir: TempDir,
}

impl SqliteBackend {
    fn path(&self) -> String {
        self.dir.path().join("queue.db").display().to_string()
    }

    /// A raw connection, as an operator or a test of time would use.
    fn raw(&self) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(self.path()).expect("raw connection");
        conn.busy_timeout(Duration::from_secs(10)).unwrap();
        conn
    }
}

#[async_trait]
impl TestBackend for SqliteBackend {
    async fn fresh() -> Self {
        let backend = Self {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        // Opening applies the migrations, so `put` finds the table.
        backend.open().await;
        backend
    }

    async fn open(&self) -> Arc<dyn TaskQueue> {
        let store = SqliteStore::open(&self.path()).await.expect("open");
        Arc::new(SqliteQueue::new(Arc::new(store)))
    }

    async fn put(&self, tenant: &Tenant, task: &Task) {
        let conn = self.raw();
        conn.execute(
            "DELETE FROM tasks WHERE tenant = ?1 AND id = ?2",
            [tenant.as_str(), task.id.as_str()],
        )
        .unwrap();
        conn.prepare(INSERT_TASK)
            .unwrap()
            .query_row(insert_params(tenant, task).unwrap().as_slice(), |_| Ok(()))
            .unwrap();
    }

    fn stored(time: SystemTime) -> SystemTime {
        from_micros(to_micros(time))
    }
}

type RawColumns = (String, Option<i64>, i64, Option<String>, Option<i64>);

/// The columns a transition writes, read straight from the file.
fn raw_columns(backend: &SqliteBackend, task: &Task) -> RawColumns {
    backend
        .raw()
        .query_row(
            "SELECT state, lease_expires_at, next_attempt_at, last_error_class, approval_decision
               FROM tasks WHERE id = ?1",
            [task.id.as_str()],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            },
        )
        .unwrap()
}

#[tokio::test]
async fn times_are_stored_as_microseconds_and_decisions_as_integers() {
    let backend = SqliteBackend::fresh().await;
    let samples = write_column_samples(&*backend.open().await).await;
    let due = to_micros(samples.due);
    assert_eq!(
        raw_columns(&backend, &samples.failed),
        ("pending".into(), None, due, Some("transient".into()), None)
    );
    assert_eq!(raw_columns(&backend, &samples.approved).4, Some(1));
    assert_eq!(raw_columns(&backend, &samples.rejected).4, Some(0));
}

mod suite {
    checkpointd_storage::queue_behaviours!(super::SqliteBackend);
}
