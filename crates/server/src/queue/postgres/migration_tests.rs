//! The task table arrives by migration: a database written before the queue existed gains it
//! on connect, its checkpoints untouched.

use std::sync::Arc;

use crate::domain::{RunId, Step, Tenant};
use crate::queue::{NewTask, PostgresQueue, RetryPolicy, TaskQueue};
use crate::store::CheckpointStore;
use crate::store::postgres::tests::{TestSchema, checkpoint, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_database_gains_the_task_table_on_connect() {
    let schema = TestSchema::create().await;
    let key = run("default", "run-1");
    schema
        .store()
        .await
        .save(&checkpoint(&key, 1, b"1", 0, &["hi"]))
        .await
        .unwrap();
    // Back to what a binary without the queue left behind.
    schema
        .sql("DROP TABLE tasks; DELETE FROM checkpointd_migrations WHERE version = 2")
        .await;

    let store = Arc::new(schema.store().await);
    let queue = PostgresQueue::new(store.clone());
    let t = Tenant::parse("default").unwrap();
    let new = NewTask {
        run_id: RunId::parse("run-1").unwrap(),
        input: Vec::new(),
        idempotency_key: None,
        retry_policy: RetryPolicy::default(),
    };
    let (task, _) = queue.enqueue(&t, new).await.unwrap();
    assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(task));
    assert_eq!(store.steps(&key).await.unwrap(), vec![Step::new(1)]);
}
