//! Save and RecordToolResult: round trips, identical retries, conflicts, message offsets and
//! concurrent writers.

use std::sync::Arc;

use super::{TestBackend, checkpoint, load_at, load_latest, message, run, steps, texts, tool};
use checkpointd_core::domain::{Step, verify_tool_journal};
use checkpointd_core::error::Error;

pub async fn a_saved_checkpoint_loads_back_whole_and_verifies(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    let mut first = checkpoint(&key, 1, 0, &[]);
    first.messages = vec![message("user", "hi"), message("assistant", "hello")];
    let saved_first = store.save(&first).await.unwrap();
    assert!(!saved_first.already_existed);
    assert_eq!(saved_first.tool_count, 0);
    let (record, existed) = store
        .record_tool_result(&tool(&key, "c1", "42"))
        .await
        .unwrap();
    assert!(!existed);
    let second = checkpoint(&key, 2, 2, &["more"]);
    let saved = store.save(&second).await.unwrap();
    assert!(!saved.already_existed);
    assert_eq!(saved.tool_count, 1);

    let latest = load_latest(&*store, &key).await;
    let loaded = &latest.checkpoint;
    assert_eq!(loaded.id, saved.id);
    assert_eq!(loaded.checksum, saved.checksum);
    assert_eq!(loaded.created_at, saved.created_at);
    assert_eq!(loaded.run_id, key.run_id);
    assert_eq!(loaded.step, Step::new(2));
    assert_eq!(loaded.epoch.get(), 0);
    assert_eq!(loaded.state, second.state);
    assert_eq!(loaded.metadata, second.metadata);
    assert_eq!(loaded.content_type, second.content_type);
    assert_eq!(texts(&loaded.messages), ["hi", "hello", "more"]);
    assert_eq!(loaded.messages[1], message("assistant", "hello"));
    assert_eq!(loaded.message_count, 3);
    assert_eq!(loaded.tool_count, 1);
    assert_eq!(loaded.quarantine, None);
    assert_eq!(latest.tools, vec![record]);
    loaded.verify(&latest.tools).unwrap();

    let earlier = load_at(&*store, &key, 1).await;
    assert_eq!(earlier.checkpoint.id, saved_first.id);
    assert_eq!(earlier.checkpoint.messages, first.messages);
    assert_eq!(earlier.checkpoint.tool_count, 0);
    // The whole journal comes along, including results recorded after the checkpoint.
    assert_eq!(earlier.tools.len(), 1);
    earlier.checkpoint.verify(&earlier.tools).unwrap();
}

pub async fn a_run_without_messages_or_tools_loads_whole(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    store.save(&checkpoint(&key, 1, 0, &[])).await.unwrap();
    let saved = store.save(&checkpoint(&key, 2, 0, &[])).await.unwrap();
    let latest = load_latest(&*store, &key).await;
    latest.checkpoint.verify(&latest.tools).unwrap();
    assert_eq!(latest.checkpoint.id, saved.id);
    assert_eq!(latest.checkpoint.state, b"{\"step\":2}");
    assert_eq!(latest.checkpoint.metadata["agent"], "planner");
    assert!(latest.checkpoint.messages.is_empty() && latest.tools.is_empty());
    let first = load_at(&*store, &key, 1).await;
    first.checkpoint.verify(&first.tools).unwrap();
    assert_eq!(first.checkpoint.state, b"{\"step\":1}");
}

pub async fn an_identical_retry_succeeds_and_changes_nothing(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    let request = checkpoint(&key, 1, 0, &["hi"]);
    let first = store.save(&request).await.unwrap();
    let retry = store.save(&request).await.unwrap();
    assert!(retry.already_existed);
    assert_eq!(
        (
            &retry.id,
            retry.checksum,
            retry.created_at,
            retry.tool_count
        ),
        (
            &first.id,
            first.checksum,
            first.created_at,
            first.tool_count
        )
    );
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1]));
    // The retry appended nothing: the log still holds one message.
    store
        .save(&checkpoint(&key, 2, 1, &["next"]))
        .await
        .unwrap();
    let latest = load_latest(&*store, &key).await;
    assert_eq!(texts(&latest.checkpoint.messages), ["hi", "next"]);
    latest.checkpoint.verify(&latest.tools).unwrap();
}

pub async fn different_content_at_a_saved_step_conflicts_and_changes_nothing(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    let first = checkpoint(&key, 1, 0, &["a"]);
    let saved = store.save(&first).await.unwrap();
    let mut other = first.clone();
    other.state = b"different".to_vec();
    let error = store.save(&other).await.unwrap_err();
    assert!(matches!(error, Error::StepConflict(_)), "{error:?}");
    // Different messages at the same step, from where the log now ends, conflict too.
    let error = store
        .save(&checkpoint(&key, 1, 1, &["b"]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::StepConflict(_)), "{error:?}");

    let loaded = load_at(&*store, &key, 1).await;
    assert_eq!(loaded.checkpoint.checksum, saved.checksum);
    assert_eq!(loaded.checkpoint.state, first.state);
    assert_eq!(texts(&loaded.checkpoint.messages), ["a"]);
    // The log still ends at one message: a save at offset 1 goes through.
    store.save(&checkpoint(&key, 2, 1, &["b"])).await.unwrap();
}

pub async fn a_message_offset_that_leaves_a_gap_or_overlaps_is_refused(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, 0, &["a", "b"]))
        .await
        .unwrap();
    // Past the end: a lost predecessor, for the client to resync from.
    for offset in [5, 3] {
        let error = store
            .save(&checkpoint(&key, 2, offset, &["c"]))
            .await
            .unwrap_err();
        assert!(
            matches!(error, Error::MessageLogBehind(_)),
            "offset {offset}: {error:?}"
        );
    }
    // Inside the log: a client bug that would overwrite it.
    for offset in [1, 0] {
        let error = store
            .save(&checkpoint(&key, 2, offset, &["c"]))
            .await
            .unwrap_err();
        assert!(
            matches!(error, Error::InvalidField { .. }),
            "offset {offset}: {error:?}"
        );
    }
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1]));
    let saved = store.save(&checkpoint(&key, 2, 2, &["c"])).await.unwrap();
    let latest = load_latest(&*store, &key).await;
    assert_eq!(latest.checkpoint.id, saved.id);
    assert_eq!(texts(&latest.checkpoint.messages), ["a", "b", "c"]);
}

pub async fn a_step_not_after_the_latest_is_refused(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    store.save(&checkpoint(&key, 1, 0, &[])).await.unwrap();
    store.save(&checkpoint(&key, 5, 0, &[])).await.unwrap();
    for step in [3, 2] {
        let error = store
            .save(&checkpoint(&key, step, 0, &[]))
            .await
            .unwrap_err();
        assert!(
            matches!(error, Error::StepBehindLatest(_)),
            "step {step}: {error:?}"
        );
    }
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1, 5]));
    store.save(&checkpoint(&key, 6, 0, &[])).await.unwrap();
}

pub async fn a_retried_tool_result_returns_the_stored_record(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    let (first, existed) = store
        .record_tool_result(&tool(&key, "c1", "42"))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!((first.seq, first.output.as_slice()), (1, b"42".as_slice()));
    let (again, existed) = store
        .record_tool_result(&tool(&key, "c1", "42"))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(again, first);
    // A retry's output does not matter: the journal keeps what was recorded first.
    let (again, existed) = store
        .record_tool_result(&tool(&key, "c1", "other output"))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(again, first);
    let (second, existed) = store
        .record_tool_result(&tool(&key, "c2", "7"))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!(second.seq, 2);
    let journal = store.tools(&key).await.unwrap();
    assert_eq!(journal, vec![first, second]);
    verify_tool_journal(&journal).unwrap();
    assert!(store.run_exists(&key).await.unwrap());
}

pub async fn concurrent_tool_results_make_a_gapless_journal(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    let writers: Vec<_> = (0..16)
        .map(|i| {
            let (store, key) = (Arc::clone(&store), key.clone());
            tokio::spawn(async move {
                store
                    .record_tool_result(&tool(&key, &format!("call-{i}"), "out"))
                    .await
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap().unwrap();
    }
    let journal = store.tools(&key).await.unwrap();
    assert_eq!(journal.len(), 16);
    verify_tool_journal(&journal).unwrap();
}

pub async fn concurrent_saves_to_many_runs_all_land_in_order(backend: &impl TestBackend) {
    let store = backend.store();
    let keys: Vec<_> = (0..24)
        .map(|i| run("default", &format!("run-{i}")))
        .collect();
    for key in &keys {
        store
            .save(&checkpoint(key, 1, 0, &["hello"]))
            .await
            .unwrap();
    }
    let mut saves = tokio::task::JoinSet::new();
    for key in keys.clone() {
        let store = Arc::clone(&store);
        saves.spawn(async move {
            for step in 2..6u64 {
                let text = format!("m{step}");
                let saved = store
                    .save(&checkpoint(&key, step, step - 1, &[&text]))
                    .await?;
                assert!(!saved.already_existed);
            }
            Ok::<_, Error>(())
        });
    }
    while let Some(outcome) = saves.join_next().await {
        outcome.unwrap().unwrap();
    }
    for key in &keys {
        assert_eq!(store.steps(key).await.unwrap(), steps(&[1, 2, 3, 4, 5]));
        let latest = load_latest(&*store, key).await;
        latest.checkpoint.verify(&latest.tools).unwrap();
        assert_eq!(latest.checkpoint.step, Step::new(5));
        assert_eq!(
            texts(&latest.checkpoint.messages),
            ["hello", "m2", "m3", "m4", "m5"]
        );
    }
}
