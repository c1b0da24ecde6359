//! The task table arrives by migration: a database written before the queue existed gains it
//! on open, its checkpoints untouched.

use std::sync::Arc;

use crate::domain::{RunId, Step, Tenant};
use crate::queue::{NewTask, RetryPolicy, SqliteQueue, TaskQueue};
use crate::store::CheckpointStore;
use crate::store::sqlite::tests::{Db, checkpoint};
use crate::store::tests::{message, run};

#[tokio::test]
async fn a_version_1_database_gains_the_task_table_on_open() {
    let db = Db::new();
    let run = run("default", "run-1");
    db.open()
        .await
        .save(&checkpoint(&run, 1, 0, vec![message("user", "hi")]))
        .await
        .unwrap();
    // Back to what a binary without the queue (and without retention or tool intents, which
    // came later) left behind.
    db.raw()
        .execute_batch(
            "DROP TABLE tasks; DROP TABLE checkpoint_pins; DROP INDEX runs_with_retention;
             ALTER TABLE runs DROP COLUMN retention; DROP TABLE journal_actions;
             DELETE FROM checkpointd_migrations WHERE version >= 2;",
        )
        .unwrap();

    let store = Arc::new(db.open().await);
    let queue = SqliteQueue::new(store.clone());
    let t = Tenant::parse("default").unwrap();
    let new = NewTask {
        run_id: RunId::parse("run-1").unwrap(),
        input: Vec::new(),
        idempotency_key: None,
        retry_policy: RetryPolicy::default(),
    };
    let (task, _) = queue.enqueue(&t, new).await.unwrap();
    assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(task));
    assert_eq!(store.steps(&run).await.unwrap(), vec![Step::new(1)]);
}
