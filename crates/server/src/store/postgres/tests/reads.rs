//! Loads: the checkpoint-only statement for runs with no messages and no tool results.

use super::{TestSchema, checkpoint, run, texts, tool};
use crate::domain::Step;
use crate::store::{CheckpointStore, Which};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_messages_or_tools_loads_whole_from_the_checkpoint_alone() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, b"one", 0, &[]))
        .await
        .unwrap();
    let saved = store
        .save(&checkpoint(&key, 2, b"two", 0, &[]))
        .await
        .unwrap();
    let latest = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    latest.checkpoint.verify(&latest.tools).unwrap();
    assert_eq!(latest.checkpoint.id, saved.id);
    assert_eq!(latest.checkpoint.state, b"two");
    assert_eq!(latest.checkpoint.metadata["model"], "m1");
    assert!(latest.checkpoint.messages.is_empty() && latest.tools.is_empty());
    let first = store
        .load(&key, Which::At(Step::new(1)))
        .await
        .unwrap()
        .unwrap();
    first.checkpoint.verify(&first.tools).unwrap();
    assert_eq!(first.checkpoint.state, b"one");
    assert!(
        store
            .load(&key, Which::At(Step::new(9)))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .load(&key, Which::LatestBelow(Some(Step::new(1))))
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_and_tools_another_instance_added_are_loaded_too() {
    let schema = TestSchema::create().await;
    let (store, other) = (schema.store().await, schema.store().await);
    let key = run("default", "run-1");
    // `store` caches a run with no messages and no tool results...
    store
        .save(&checkpoint(&key, 1, b"one", 0, &[]))
        .await
        .unwrap();
    // ...which another instance then gives a tool result, and a checkpoint with messages.
    let (record, _) = other
        .record_tool_result(&tool(&key, "c1", 1, b"out"))
        .await
        .unwrap();
    let latest = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.tools, vec![record.clone()]);
    latest.checkpoint.verify(&latest.tools).unwrap();
    other
        .save(&checkpoint(&key, 2, b"two", 0, &["hi", "there"]))
        .await
        .unwrap();
    let latest = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    latest.checkpoint.verify(&latest.tools).unwrap();
    assert_eq!(latest.checkpoint.step, Step::new(2));
    assert_eq!(texts(&latest.checkpoint.messages), ["hi", "there"]);
    assert_eq!(latest.tools, vec![record]);
}
