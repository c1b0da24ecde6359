//! The Postgres side of the queue suite: its [`TestBackend`], on a schema of its own per test
//! (or a database behind PgBouncer in transaction mode),
//! and what only Postgres shows: the columns as the table holds them.

use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;

use super::PostgresQueue;
use super::sql::INSERT_TASK;
use super::task_row::TaskParams;
use crate::testing::{Direct, Route, TestSchema, raw_client};
use checkpointd_core::domain::Tenant;
use checkpointd_core::time::whole_micros;
use checkpointd_storage::queue::tests::{TestBackend, write_column_samples};
use checkpointd_storage::queue::{Task, TaskQueue};

pub(crate) struct PostgresBackend<R: Route = Direct> {
    schema: TestSchema,
    route: std::marker::PhantomData<R>,
}

#[async_trait]
impl<R: Route> TestBackend for PostgresBackend<R> {
    async fn fresh() -> Self {
        let backend = Self {
            schema: R::schema().await,
            route: std::marker::PhantomData,
        };
        // Connecting applies the migrations, so `put` finds the table.
        backend.open().await;
        backend
    }

    async fn open(&self) -> Arc<dyn TaskQueue> {
        Arc::new(PostgresQueue::new(Arc::new(self.schema.store().await)))
    }

    async fn put(&self, tenant: &Tenant, task: &Task) {
        let client = raw_client(&self.schema.raw_url()).await;
        client
            .execute(
                "DELETE FROM tasks WHERE tenant = $1 AND id = $2",
                &[&tenant.as_str(), &task.id.as_str()],
            )
            .await
            .unwrap();
        let params = TaskParams::new(tenant, task).unwrap();
        client
            .query_one(INSERT_TASK, &params.insert())
            .await
            .unwrap();
    }

    fn stored(time: SystemTime) -> SystemTime {
        whole_micros(time)
    }
}

type RawColumns = (
    String,
    Option<SystemTime>,
    SystemTime,
    Option<String>,
    Option<bool>,
);

/// The columns a transition writes, read straight from the table.
async fn raw_columns(backend: &PostgresBackend, task: &Task) -> RawColumns {
    let row = raw_client(&backend.schema.raw_url())
        .await
        .query_one(
            "SELECT state, lease_expires_at, next_attempt_at, last_error_class, approval_decision
               FROM tasks WHERE id = $1",
            &[&task.id.as_str()],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn times_are_stored_as_timestamptz_and_decisions_as_booleans() {
    let backend = PostgresBackend::fresh().await;
    let samples = write_column_samples(&*backend.open().await).await;
    let due = whole_micros(samples.due);
    assert_eq!(
        raw_columns(&backend, &samples.failed).await,
        ("pending".into(), None, due, Some("transient".into()), None)
    );
    assert_eq!(raw_columns(&backend, &samples.approved).await.4, Some(true));
    assert_eq!(
        raw_columns(&backend, &samples.rejected).await.4,
        Some(false)
    );
}

mod suite {
    checkpointd_storage::queue_behaviours!(super::PostgresBackend);
}

/// The same suite through PgBouncer in transaction mode, with unnamed statements.
mod behind_a_transaction_pooler {
    use crate::testing::TransactionPooler;

    checkpointd_storage::queue_behaviours!(super::PostgresBackend<TransactionPooler>);
}
