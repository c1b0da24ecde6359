//! Save and RecordToolResult: round trips, retries, conflicts, fencing and the fast path's cache.

use super::{TestSchema, checkpoint, run, texts, tool};
use crate::domain::{MessageChain, Step};
use crate::error::Error;
use crate::store::{CheckpointStore, Which};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_checkpoint_loads_back_whole_and_verifies() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, b"{\"a\":1}", 0, &["hi", "there"]))
        .await
        .unwrap();
    let (record, existed) = store
        .record_tool_result(&tool(&key, "c1", 1, b"out"))
        .await
        .unwrap();
    assert!(!existed);
    let saved = store
        .save(&checkpoint(&key, 2, b"{\"a\":2}", 2, &["more"]))
        .await
        .unwrap();
    assert!(!saved.already_existed);

    let latest = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.checkpoint.step, Step::new(2));
    assert_eq!(latest.checkpoint.id, saved.id);
    assert_eq!(latest.checkpoint.checksum, saved.checksum);
    assert_eq!(latest.checkpoint.created_at, saved.created_at);
    assert_eq!(latest.checkpoint.state, b"{\"a\":2}");
    assert_eq!(latest.checkpoint.metadata["model"], "m1");
    assert_eq!(texts(&latest.checkpoint.messages), ["hi", "there", "more"]);
    assert_eq!(latest.checkpoint.tool_count, 1);
    assert_eq!(latest.tools, vec![record]);
    latest.checkpoint.verify(&latest.tools).unwrap();

    let first = store
        .load(&key, Which::LatestBelow(Some(Step::new(2))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(texts(&first.checkpoint.messages), ["hi", "there"]);
    first.checkpoint.verify(&first.tools).unwrap();
    assert!(
        store
            .load(&key, Which::LatestBelow(Some(Step::new(1))))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .load(&key, Which::At(Step::new(7)))
            .await
            .unwrap()
            .is_none()
    );

    assert_eq!(
        store.steps(&key).await.unwrap(),
        [Step::new(1), Step::new(2)]
    );
    let page = store.list(&key, Some(Step::new(1)), 10).await.unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].size_bytes, 7);
    assert_eq!(page[0].message_count, 3);
    assert!(store.run_exists(&key).await.unwrap());
    assert!(!store.run_exists(&run("default", "nope")).await.unwrap());
    store.ping().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_save_or_tool_result_changes_nothing() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    let request = checkpoint(&key, 1, b"s", 0, &["a"]);
    let first = store.save(&request).await.unwrap();
    let again = store.save(&request).await.unwrap();
    assert!(again.already_existed);
    assert_eq!(
        (again.id.as_str(), again.checksum),
        (first.id.as_str(), first.checksum)
    );
    // A second instance, with nothing cached, agrees.
    let other = schema.store().await;
    assert!(other.save(&request).await.unwrap().already_existed);

    let (recorded, _) = store
        .record_tool_result(&tool(&key, "c1", 1, b"x"))
        .await
        .unwrap();
    let (replayed, existed) = other
        .record_tool_result(&tool(&key, "c1", 1, b"x"))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(replayed, recorded);
    let (replayed, existed) = store
        .record_tool_result(&tool(&key, "c1", 1, b"x"))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(replayed, recorded);
    assert_eq!(store.tools(&key).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn different_content_at_a_saved_step_conflicts_and_changes_nothing() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, b"one", 0, &["a"]))
        .await
        .unwrap();
    let error = store
        .save(&checkpoint(&key, 1, b"two", 1, &["b"]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Conflict(_)), "{error:?}");
    let error = store
        .save(&checkpoint(&key, 2, b"two", 5, &["b"]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InvalidArgument(_)), "{error:?}");
    let loaded = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(loaded.checkpoint.state, b"one");
    assert_eq!(texts(&loaded.checkpoint.messages), ["a"]);
    // The log still ends at one message: a save at offset 1 goes through.
    store
        .save(&checkpoint(&key, 2, b"two", 1, &["b"]))
        .await
        .unwrap();
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
    assert!(matches!(error, Error::FailedPrecondition(_)), "{error:?}");
    // And fences it: the epoch a hands out on resume wins over a's cached epoch 0.
    let epoch = b.begin_resume(&key).await.unwrap();
    let error = a
        .save(&checkpoint(&key, 6, b"6", 0, &[]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::FailedPrecondition(_)), "{error:?}");
    let mut fenced = checkpoint(&key, 6, b"6", 0, &[]);
    fenced.epoch = epoch;
    a.save(&fenced).await.unwrap();
    assert_eq!(b.steps(&key).await.unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_fences_rewinds_and_a_newer_epoch_replaces() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, b"1", 0, &["a"]))
        .await
        .unwrap();
    store
        .save(&checkpoint(&key, 2, b"2", 1, &["b", "c"]))
        .await
        .unwrap();
    let epoch = store.begin_resume(&key).await.unwrap();
    assert_eq!(epoch, 1);
    let error = store
        .rewind(&key, 0, MessageChain::EMPTY)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::FailedPrecondition(_)), "{error:?}");
    let restored = store
        .load(&key, Which::At(Step::new(1)))
        .await
        .unwrap()
        .unwrap();
    store
        .rewind(
            &key,
            epoch,
            MessageChain::over(&restored.checkpoint.messages),
        )
        .await
        .unwrap();
    let mut stale = checkpoint(&key, 3, b"3", 1, &["x"]);
    let error = store.save(&stale).await.unwrap_err();
    assert!(matches!(error, Error::FailedPrecondition(_)), "{error:?}");
    stale.epoch = epoch;
    stale.step = Step::new(2);
    let replaced = store.save(&stale).await.unwrap();
    assert!(!replaced.already_existed);
    let latest = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(texts(&latest.checkpoint.messages), ["a", "x"]);
    latest.checkpoint.verify(&latest.tools).unwrap();
    let error = store
        .rewind(&run("default", "ghost"), 0, MessageChain::EMPTY)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::NotFound(_)), "{error:?}");
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
    assert!(matches!(loser, Error::Conflict(_)), "{loser:?}");
    let latest = a
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        texts(&latest.checkpoint.messages),
        ["m", &format!("from {winner}")]
    );
    latest.checkpoint.verify(&latest.tools).unwrap();
}
