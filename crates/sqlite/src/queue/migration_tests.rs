//! The task table arrives by migration: a database written before the queue existed gains it
//! on open, its checkpoints untouched.

use std::sync::Arc;

use crate::SqliteQueue;
use crate::store::tests::{Db, checkpoint};
use checkpointd_core::domain::{Step, Tenant};
use checkpointd_storage::queue::tests::new_task;
use checkpointd_storage::queue::{NewTask, TaskQueue};
use checkpointd_storage::store::CheckpointStore;
use checkpointd_storage::store::tests::{message, run};

#[tokio::test]
async fn a_version_1_database_gains_the_task_table_on_open() {
    let db = Db::new();
    let run = run("default", "run-1");
    db.open()
        .await
        .save(&checkpoint(&run, 1, 0, vec![message("user", "hi")]))
        .await
        .unwrap();
    // Back to what a binary without the queue (and without retention, tool intents, API keys,
    // labels, notifications, quarantine times or argument digests, which came later) left behind.
    db.raw()
        .execute_batch(
            "DROP TABLE tasks; DROP TABLE checkpoint_pins; DROP INDEX runs_with_retention;
             ALTER TABLE runs DROP COLUMN retention; DROP TABLE journal_actions;
             DROP INDEX checkpoints_label; ALTER TABLE checkpoints DROP COLUMN label;
             DROP TABLE api_keys; DROP TABLE webhook_endpoints;
             DROP TABLE notification_events; DROP TABLE webhook_deliveries;
             ALTER TABLE checkpoints DROP COLUMN quarantined_at;
             ALTER TABLE tool_results DROP COLUMN arguments_digest;
             DELETE FROM checkpointd_migrations WHERE version >= 2;",
        )
        .unwrap();

    let store = Arc::new(db.open().await);
    let queue = SqliteQueue::new(store.clone());
    let t = Tenant::parse("default").unwrap();
    let (task, _) = queue.enqueue(&t, new_task("run-1", None)).await.unwrap();
    assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(task));
    assert_eq!(store.steps(&run).await.unwrap(), vec![Step::new(1)]);
}

#[tokio::test]
async fn tasks_enqueued_before_version_5_resume_by_themselves_after_a_decision() {
    let db = Db::new();
    let queue = SqliteQueue::new(Arc::new(db.open().await));
    let t = Tenant::parse("default").unwrap();
    let new = NewTask {
        auto_resume_hitl: false,
        ..new_task("run-1", None)
    };
    let (task, _) = queue.enqueue(&t, new).await.unwrap();
    drop(queue);
    // Back to a schema from before version 5, which had no such column (nor version 6's keys, the labels of
    // version 7 or the journal index of version 8, version 9's notifications or version 10's
    // quarantine times and argument digests).
    db.raw()
        .execute_batch(
            "ALTER TABLE tasks DROP COLUMN auto_resume_hitl; DROP TABLE api_keys;
             DROP INDEX checkpoints_label; ALTER TABLE checkpoints DROP COLUMN label;
             DROP INDEX tool_results_by_step; DROP TABLE webhook_endpoints;
             DROP TABLE notification_events; DROP TABLE webhook_deliveries;
             ALTER TABLE checkpoints DROP COLUMN quarantined_at;
             ALTER TABLE tool_results DROP COLUMN arguments_digest;
             DELETE FROM checkpointd_migrations WHERE version >= 5;",
        )
        .unwrap();

    let queue = SqliteQueue::new(Arc::new(db.open().await));
    let read = queue.get(&t, &task.id).await.unwrap().unwrap();
    assert!(read.auto_resume_hitl);
}
