//! Save and RecordToolResult: idempotency, conflicts, fencing and durability across reopen.

use super::*;

#[tokio::test]
async fn save_then_load_round_trips_everything_the_checksum_covers() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    let request = checkpoint(
        &run,
        1,
        0,
        vec![message("user", "hi"), message("assistant", "hello")],
    );
    let saved = store.save(&request).await.unwrap();
    assert!(!saved.already_existed);
    store
        .record_tool_result(&tool(&run, "c1", "42"))
        .await
        .unwrap();

    let snapshot = store
        .load(&run, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    let loaded = &snapshot.checkpoint;
    assert_eq!(loaded.id, saved.id);
    assert_eq!(loaded.checksum, saved.checksum);
    assert_eq!(loaded.created_at, saved.created_at);
    assert_eq!(loaded.step, Step::new(1));
    assert_eq!(loaded.state, request.state);
    assert_eq!(loaded.metadata, request.metadata);
    assert_eq!(loaded.content_type, request.content_type);
    assert_eq!(loaded.messages, request.messages);
    assert_eq!(loaded.quarantine, None);
    assert_eq!(snapshot.tools.len(), 1);
    loaded.verify(&snapshot.tools).unwrap();
}

#[tokio::test]
async fn an_identical_retry_succeeds_and_changes_nothing() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    let request = checkpoint(&run, 1, 0, vec![message("user", "hi")]);
    let first = store.save(&request).await.unwrap();
    let retry = store.save(&request).await.unwrap();
    assert!(retry.already_existed);
    assert_eq!(
        (&retry.id, retry.checksum, retry.created_at),
        (&first.id, first.checksum, first.created_at)
    );
    assert_eq!(store.steps(&run).await.unwrap(), vec![Step::new(1)]);
    let messages: i64 = db
        .raw()
        .query_row("SELECT count(*) FROM messages", [], |row| row.get(0))
        .unwrap();
    assert_eq!(messages, 1);
}

#[tokio::test]
async fn different_content_at_a_saved_step_is_a_conflict_that_changes_nothing() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    let first = checkpoint(&run, 1, 0, vec![message("user", "hi")]);
    let saved = store.save(&first).await.unwrap();
    let mut other = first.clone();
    other.state = b"different".to_vec();
    let error = store.save(&other).await.unwrap_err();
    assert!(matches!(error, Error::Conflict(_)), "{error:?}");
    let loaded = store
        .load(&run, Which::At(Step::new(1)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(loaded.checkpoint.checksum, saved.checksum);
}

#[tokio::test]
async fn a_stale_epoch_is_fenced_and_leaves_no_trace() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    assert_eq!(store.begin_resume(&run).await.unwrap(), 1);
    let stale = checkpoint(&run, 1, 0, vec![message("user", "hi")]);
    let error = store.save(&stale).await.unwrap_err();
    assert!(matches!(error, Error::FailedPrecondition(_)), "{error:?}");
    let error = store
        .record_tool_result(&tool(&run, "c1", "x"))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::FailedPrecondition(_)), "{error:?}");
    assert!(store.steps(&run).await.unwrap().is_empty());
    assert!(store.tools(&run).await.unwrap().is_empty());
    assert_eq!(store.begin_resume(&run).await.unwrap(), 2);
}

#[tokio::test]
async fn a_retried_tool_result_returns_the_stored_record() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    let (first, existed) = store
        .record_tool_result(&tool(&run, "c1", "42"))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!(first.seq, 1);
    let (again, existed) = store
        .record_tool_result(&tool(&run, "c1", "other output"))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(again, first);
    let (second, _) = store
        .record_tool_result(&tool(&run, "c2", "7"))
        .await
        .unwrap();
    assert_eq!(second.seq, 2);
    assert_eq!(store.tools(&run).await.unwrap(), vec![first, second]);
}

#[tokio::test]
async fn data_survives_closing_and_reopening_the_file() {
    let db = Db::new();
    let run = run("default", "run-1");
    let saved = {
        let store = db.open().await;
        store
            .record_tool_result(&tool(&run, "c1", "42"))
            .await
            .unwrap();
        store
            .save(&checkpoint(&run, 3, 0, vec![message("user", "hi")]))
            .await
            .unwrap()
    };
    let store = db.open().await;
    let snapshot = store
        .load(&run, Which::At(Step::new(3)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.checkpoint.id, saved.id);
    snapshot.checkpoint.verify(&snapshot.tools).unwrap();
    // The next save continues the message log where it was left.
    store
        .save(&checkpoint(&run, 4, 1, vec![message("assistant", "yo")]))
        .await
        .unwrap();
    let versions: Vec<i64> = db
        .raw()
        .prepare("SELECT version FROM checkpointd_migrations")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(versions, vec![1, 2, 3], "migrations apply once");
}

#[tokio::test]
async fn concurrent_writers_to_one_run_get_a_gapless_journal() {
    let db = Db::new();
    let store = Arc::new(db.open().await);
    let run = run("default", "run-1");
    let writers: Vec<_> = (0..16)
        .map(|i| {
            let (store, run) = (Arc::clone(&store), run.clone());
            tokio::spawn(async move {
                store
                    .record_tool_result(&tool(&run, &format!("call-{i}"), "out"))
                    .await
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap().unwrap();
    }
    let tools = store.tools(&run).await.unwrap();
    assert_eq!(tools.len(), 16);
    crate::domain::verify_tool_journal(&tools).unwrap();
}
