//! Group commit: the batch statement applies each Save exactly as the single statement would.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::super::batch::write_as_batch;
use super::super::save::PlannedWrite;
use super::{TestSchema, checkpoint, load_latest, run, texts, tool};
use crate::PostgresStore;
use checkpointd_core::domain::{NewCheckpoint, RunKey, Step};
use checkpointd_core::error::Error;
use checkpointd_core::plan::{self, SaveContext, SavePlan};
use checkpointd_storage::store::CheckpointStore;

/// Plans `request` from `store`'s cached run row, as the fast path does.
fn planned(store: &PostgresStore, request: NewCheckpoint) -> PlannedWrite<'static> {
    let cached = store.cache.get(&request.run).expect("a cached run");
    let context = SaveContext {
        head: cached.head,
        existing: None,
        latest_step: cached.latest_step.expect("a known latest step"),
        prefix: Some(cached.head.messages.head),
        label_step: None,
        tools: Some(cached.head.tools),
    };
    let Ok(SavePlan::Write {
        id,
        checksum,
        rows,
        head,
        ..
    }) = plan::plan_save(&request, &context)
    else {
        panic!("expected a write plan for {request:?}");
    };
    PlannedWrite {
        request: Cow::Owned(request),
        id,
        checksum,
        rows,
        head,
        expected: cached.head,
        tool_count: cached.head.tools.len,
        version: cached.updated_at,
    }
}

fn assert_all_applied<T: std::fmt::Debug>(outcomes: &[checkpointd_core::error::Result<Option<T>>]) {
    assert!(
        outcomes
            .iter()
            .all(|outcome| matches!(outcome, Ok(Some(_)))),
        "{outcomes:?}"
    );
}

async fn runs_with_one_checkpoint(store: &PostgresStore, count: usize) -> Vec<RunKey> {
    let mut keys = Vec::new();
    for index in 0..count {
        let key = run("default", &format!("run-{index}"));
        store
            .save(&checkpoint(&key, 1, b"first", 0, &["hello"]))
            .await
            .unwrap();
        keys.push(key);
    }
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_stores_each_save_whole_with_its_messages_and_metadata() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let keys = runs_with_one_checkpoint(&store, 4).await;
    let writes = keys
        .iter()
        .enumerate()
        .map(|(index, key)| {
            let texts: Vec<String> = (0..index).map(|n| format!("{index}-{n}")).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let mut request = checkpoint(key, 2, format!("state {index}").as_bytes(), 1, &texts);
            request.metadata = (0..index)
                .map(|n| (format!("k{n}"), format!("v{index}{n}")))
                .collect::<BTreeMap<_, _>>();
            planned(&store, request)
        })
        .collect();
    let outcomes = write_as_batch(&store.pool, writes).await;
    assert_all_applied(&outcomes);
    for (index, (key, outcome)) in keys.iter().zip(&outcomes).enumerate() {
        let latest = load_latest(&store, key).await;
        latest.checkpoint.verify(&latest.tools).unwrap();
        let Ok(Some(written)) = outcome else {
            unreachable!()
        };
        assert_eq!(latest.checkpoint.created_at, written.created_at);
        assert_eq!(latest.checkpoint.step, Step::new(2));
        assert_eq!(latest.checkpoint.state, format!("state {index}").as_bytes());
        assert_eq!(latest.checkpoint.metadata.len(), index);
        let mut expected = vec!["hello".to_owned()];
        expected.extend((0..index).map(|n| format!("{index}-{n}")));
        assert_eq!(texts(&latest.checkpoint.messages), expected);
        assert_eq!(latest.checkpoint.message_count, 1 + index as u64);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_applies_nothing_for_a_run_that_moved_on() {
    let schema = TestSchema::create().await;
    let (store, other) = (schema.store().await, schema.store().await);
    let keys = runs_with_one_checkpoint(&store, 3).await;
    let writes = keys
        .iter()
        .map(|key| planned(&store, checkpoint(key, 2, b"two", 1, &["more"])))
        .collect();
    // Another instance journals a tool result: run-1's row is no longer the planned version.
    other
        .record_tool_result(&tool(&keys[1], "c1", "out"))
        .await
        .unwrap();
    let outcomes = write_as_batch(&store.pool, writes).await;
    assert!(matches!(outcomes[0], Ok(Some(_))), "{outcomes:?}");
    assert!(matches!(outcomes[1], Ok(None)), "{outcomes:?}");
    assert!(matches!(outcomes[2], Ok(Some(_))), "{outcomes:?}");
    assert_eq!(store.steps(&keys[1]).await.unwrap(), [Step::new(1)]);
    let latest = load_latest(&store, &keys[1]).await;
    assert_eq!(texts(&latest.checkpoint.messages), ["hello"]);
    // Through the store, the moved-on run takes the slow path and saves against the truth.
    store
        .save(&checkpoint(&keys[1], 2, b"two", 1, &["more"]))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_step_fails_the_batch_and_every_save_gets_its_own_answer() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let keys = runs_with_one_checkpoint(&store, 3).await;
    let writes = keys
        .iter()
        .map(|key| planned(&store, checkpoint(key, 2, b"two", 1, &[])))
        .collect();
    // A checkpoint at step 2 of run-2 that the run row knows nothing about.
    schema
        .sql(
            "INSERT INTO checkpoints (tenant, run_id, step, id, epoch, content_type, state,
                 metadata_keys, metadata_values, message_count, tool_count, checksum, created_at)
             VALUES ('default', 'run-2', 2, 'planted', 0, '', '', '{}', '{}', 1, 0, '', now())",
        )
        .await;
    let outcomes = write_as_batch(&store.pool, writes).await;
    assert!(matches!(outcomes[0], Ok(Some(_))), "{outcomes:?}");
    assert!(matches!(outcomes[1], Ok(Some(_))), "{outcomes:?}");
    assert!(matches!(outcomes[2], Ok(None)), "{outcomes:?}");
}

fn labelled(mut request: NewCheckpoint, label: &str) -> NewCheckpoint {
    request.label = Some(label.to_owned());
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labelled_saves_take_the_fast_path_alone_or_together() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let keys = runs_with_one_checkpoint(&store, 4).await;
    let before = store.batcher.submitted();
    // One at a time: each writes alone, without messages (the bare statement) and with them.
    store
        .save(&labelled(checkpoint(&keys[0], 2, b"two", 1, &[]), "bare"))
        .await
        .unwrap();
    store
        .save(&labelled(
            checkpoint(&keys[1], 2, b"two", 1, &["m"]),
            "full",
        ))
        .await
        .unwrap();
    // At once: whatever shares a statement, every Save went to the batcher.
    let (third, fourth) = (
        labelled(checkpoint(&keys[2], 2, b"two", 1, &["m"]), "lg"),
        labelled(checkpoint(&keys[3], 2, b"two", 1, &["m"]), "lg"),
    );
    let (third, fourth) = tokio::join!(store.save(&third), store.save(&fourth));
    third.unwrap();
    fourth.unwrap();
    assert_eq!(store.batcher.submitted() - before, 4);
    for (key, label) in keys.iter().zip(["bare", "full", "lg", "lg"]) {
        assert_eq!(
            store.label_step(key, label).await.unwrap(),
            Some(Step::new(2))
        );
        let latest = load_latest(&store, key).await;
        latest.checkpoint.verify(&latest.tools).unwrap();
        assert_eq!(latest.checkpoint.label.as_deref(), Some(label));
    }

    // In one statement, each item keeps its own label (or none).
    let writes = keys
        .iter()
        .zip([Some("three"), None, Some("three"), Some("other")])
        .map(|(key, label)| {
            // run-0's step 2 appended no message.
            let offset = store.cache.get(key).unwrap().head.messages.len;
            let request = checkpoint(key, 3, b"three", offset, &["n"]);
            let request = match label {
                Some(label) => labelled(request, label),
                None => request,
            };
            planned(&store, request)
        })
        .collect();
    let outcomes = write_as_batch(&store.pool, writes).await;
    assert_all_applied(&outcomes);
    let labels = [Some("three"), None, Some("three"), Some("other")];
    for (key, label) in keys.iter().zip(labels) {
        let at_three = load_latest(&store, key).await.checkpoint;
        assert_eq!(at_three.step, Step::new(3));
        assert_eq!(at_three.label.as_deref(), label);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_label_fails_the_batch_and_its_save_is_refused_as_before() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let keys = runs_with_one_checkpoint(&store, 3).await;
    store
        .save(&labelled(checkpoint(&keys[2], 2, b"two", 1, &[]), "lg"))
        .await
        .unwrap();
    // The same label on three runs: free on the first two, carried by step 2 of the third.
    let writes = keys
        .iter()
        .map(|key| {
            let latest = store.cache.get(key).unwrap().latest_step.unwrap().unwrap();
            let step = latest.get() + 1;
            planned(
                &store,
                labelled(checkpoint(key, step, b"next", 1, &["m"]), "lg"),
            )
        })
        .collect();
    let outcomes = write_as_batch(&store.pool, writes).await;
    assert!(matches!(outcomes[0], Ok(Some(_))), "{outcomes:?}");
    assert!(matches!(outcomes[1], Ok(Some(_))), "{outcomes:?}");
    assert!(matches!(outcomes[2], Ok(None)), "{outcomes:?}");
    assert_eq!(
        store.steps(&keys[2]).await.unwrap(),
        [Step::new(1), Step::new(2)]
    );

    // Through the store, the fast path's refusal becomes the locked path's answer.
    let before = store.batcher.submitted();
    let taken = store
        .save(&labelled(checkpoint(&keys[2], 3, b"next", 1, &["m"]), "lg"))
        .await
        .unwrap_err();
    assert!(matches!(taken, Error::LabelTaken(_)), "{taken:?}");
    assert_eq!(store.batcher.submitted() - before, 1);
    assert_eq!(
        store.steps(&keys[2]).await.unwrap(),
        [Step::new(1), Step::new(2)]
    );
}
