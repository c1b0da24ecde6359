//! The task table arrives by migration: a database written before the queue existed gains it
//! on connect, its checkpoints untouched.

use std::sync::Arc;

use crate::PostgresQueue;
use crate::store::tests::{TestSchema, checkpoint, run};
use checkpointd_core::domain::{Step, Tenant};
use checkpointd_storage::queue::tests::new_task;
use checkpointd_storage::queue::{NewTask, TaskQueue};
use checkpointd_storage::store::CheckpointStore;

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
    // Back to what a binary without the queue (nor the task columns added since) left behind.
    schema
        .sql("DROP TABLE tasks; DELETE FROM checkpointd_migrations WHERE version IN (2, 5)")
        .await;

    let store = Arc::new(schema.store().await);
    let queue = PostgresQueue::new(store.clone());
    let t = Tenant::parse("default").unwrap();
    let (task, _) = queue.enqueue(&t, new_task("run-1", None)).await.unwrap();
    assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(task));
    assert_eq!(store.steps(&key).await.unwrap(), vec![Step::new(1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_enqueued_before_version_5_resume_by_themselves_after_a_decision() {
    let schema = TestSchema::create().await;
    let store = Arc::new(schema.store().await);
    let queue = PostgresQueue::new(store.clone());
    let t = Tenant::parse("default").unwrap();
    let new = NewTask {
        auto_resume_hitl: false,
        ..new_task("run-1", None)
    };
    let (task, _) = queue.enqueue(&t, new).await.unwrap();
    // Back to a schema from before version 5, which had no such column.
    // Two calls, not one batch: Citus (TEST_CITUS_DISTRIBUTE) refuses a batch that mixes a
    // distributed table's DDL with other statements.
    schema
        .sql("ALTER TABLE tasks DROP COLUMN auto_resume_hitl")
        .await;
    schema
        .sql("DELETE FROM checkpointd_migrations WHERE version = 5")
        .await;

    let queue = PostgresQueue::new(Arc::new(schema.store().await));
    let read = queue.get(&t, &task.id).await.unwrap().unwrap();
    assert!(read.auto_resume_hitl);
}
