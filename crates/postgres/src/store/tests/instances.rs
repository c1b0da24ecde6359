//! Several store instances on one database, as several servers run: each instance's cache of
//! run rows (the fast path's guess) must never let it answer differently from the database.

use super::{TestSchema, checkpoint, load_latest, run, texts, tool};
use checkpointd_core::domain::Step;
use checkpointd_core::error::Error;
use checkpointd_storage::store::CheckpointStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_with_nothing_cached_recognises_retries() {
    let schema = TestSchema::create().await;
    let (store, other) = (schema.store().await, schema.store().await);
    let key = run("default", "run-1");
    let request = checkpoint(&key, 1, b"s", 0, &["a"]);
    let first = store.save(&request).await.unwrap();
    let again = other.save(&request).await.unwrap();
    assert!(again.already_existed);
    assert_eq!(
        (again.id.as_str(), again.checksum),
        (first.id.as_str(), first.checksum)
    );

    let (recorded, _) = store
        .record_tool_result(&tool(&key, "c1", "x"))
        .await
        .unwrap();
    let (replayed, existed) = other
        .record_tool_result(&tool(&key, "c1", "x"))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(replayed, recorded);
    assert_eq!(other.tools(&key).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_cache_never_lets_a_save_through_that_the_database_forbids() {
    let schema = TestSchema::create().await;
    let (a, b) = (schema.store().await, schema.store().await);
    let key = run("default", "run-1");
    a.save(&checkpoint(&key, 1, b"1", 0, &[])).await.unwrap();
    a.save(&checkpoint(&key, 2, b"2", 0, &[])).await.unwrap();
    // Another instance moves the run on without touching its message or tool heads.
    b.save(&checkpoint(&key, 5, b"5", 0, &[])).await.unwrap();
    let error = a
        .save(&checkpoint(&key, 3, b"3", 0, &[]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::StepBehindLatest(_)), "{error:?}");
    // And fences it: the epoch b hands out on resume wins over a's cached epoch 0.
    let epoch = b.begin_resume(&key).await.unwrap();
    let error = a
        .save(&checkpoint(&key, 6, b"6", 0, &[]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::StaleEpoch(_)), "{error:?}");
    let mut fenced = checkpoint(&key, 6, b"6", 0, &[]);
    fenced.epoch = epoch;
    a.save(&fenced).await.unwrap();
    assert_eq!(b.steps(&key).await.unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_instances_at_one_step_yield_one_winner_and_one_conflict() {
    let schema = TestSchema::create().await;
    let (a, b) = (schema.store().await, schema.store().await);
    let key = run("default", "run-1");
    a.save(&checkpoint(&key, 1, b"1", 0, &["m"])).await.unwrap();
    // Both caches are warm (b learns the run on its identical retry), so both race on the
    // fast path with plans made from the same run row.
    assert!(
        b.save(&checkpoint(&key, 1, b"1", 0, &["m"]))
            .await
            .unwrap()
            .already_existed
    );
    let (request_a, request_b) = (
        checkpoint(&key, 2, b"a", 1, &["from a"]),
        checkpoint(&key, 2, b"b", 1, &["from b"]),
    );
    let (from_a, from_b) = tokio::join!(a.save(&request_a), b.save(&request_b));
    let (winner, loser) = match (&from_a, &from_b) {
        (Ok(_), Err(error)) => ("a", error),
        (Err(error), Ok(_)) => ("b", error),
        other => panic!("expected one winner: {other:?}"),
    };
    assert!(matches!(loser, Error::StepConflict(_)), "{loser:?}");
    let latest = load_latest(&a, &key).await;
    assert_eq!(
        texts(&latest.checkpoint.messages),
        ["m", &format!("from {winner}")]
    );
    latest.checkpoint.verify(&latest.tools).unwrap();
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
        .record_tool_result(&tool(&key, "c1", "out"))
        .await
        .unwrap();
    let latest = load_latest(&store, &key).await;
    assert_eq!(latest.tools, vec![record.clone()]);
    latest.checkpoint.verify(&latest.tools).unwrap();
    other
        .save(&checkpoint(&key, 2, b"two", 0, &["hi", "there"]))
        .await
        .unwrap();
    let latest = load_latest(&store, &key).await;
    latest.checkpoint.verify(&latest.tools).unwrap();
    assert_eq!(latest.checkpoint.step, Step::new(2));
    assert_eq!(texts(&latest.checkpoint.messages), ["hi", "there"]);
    assert_eq!(latest.tools, vec![record]);
}
