//! A replay must match its call (DESIGN contract 14): every entry keeps the arguments digest
//! it was journalled with and returns it on every read, and a call id journalled with another
//! non-empty digest refuses the write (`ArgumentsMismatch`) and changes nothing.

use super::journal::intent;
use super::{TestBackend, checkpoint, load_latest, run, tool};
use crate::store::CheckpointStore;
use checkpointd_core::domain::{ArgumentsDigest, NewToolIntent, NewToolResult, RunKey, ToolChain};
use checkpointd_core::error::Error;

fn digest(fill: char) -> ArgumentsDigest {
    ArgumentsDigest::parse("arguments_digest", &fill.to_string().repeat(64)).unwrap()
}

fn called(run: &RunKey, call_id: &str, output: &str, with: &ArgumentsDigest) -> NewToolResult {
    NewToolResult {
        arguments_digest: with.clone(),
        ..tool(run, call_id, output)
    }
}

fn intended(run: &RunKey, call_id: &str, with: &ArgumentsDigest) -> NewToolIntent {
    NewToolIntent {
        arguments_digest: with.clone(),
        ..intent(run, call_id)
    }
}

/// Asserts `refused` is the mismatch of `call_id` between `stored` and `request`.
fn assert_mismatch<T: std::fmt::Debug>(
    refused: Result<T, Error>,
    call_id: &str,
    stored: &ArgumentsDigest,
    request: &ArgumentsDigest,
) {
    match refused {
        Err(Error::ArgumentsMismatch {
            call_id: id,
            stored_digest,
            request_digest,
        }) => assert_eq!(
            (id.as_str(), stored_digest.as_str(), request_digest.as_str()),
            (call_id, stored.as_str(), request.as_str())
        ),
        other => panic!("expected ArgumentsMismatch for {call_id}, got {other:?}"),
    }
}

/// The journal's length and head, which a refusal must leave as they were.
async fn journal_head(store: &dyn CheckpointStore, key: &RunKey) -> ToolChain {
    store.latest_head(key).await.unwrap().unwrap().tools
}

pub async fn a_call_journalled_with_other_arguments_is_refused_and_changes_nothing(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    let (a, b) = (digest('a'), digest('b'));
    store.save(&checkpoint(&key, 1, 0, &["m"])).await.unwrap();
    let (first, existed) = store
        .record_tool_result(&called(&key, "c1", "one", &a))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!(first.arguments_digest, a);
    // A retry with the same digest, or with none (an older client), answers the stored result.
    for with in [&a, &ArgumentsDigest::NONE] {
        let (again, existed) = store
            .record_tool_result(&called(&key, "c1", "one", with))
            .await
            .unwrap();
        assert!(existed);
        assert_eq!(again, first);
    }
    let before = journal_head(&*store, &key).await;
    assert_mismatch(
        store
            .record_tool_result(&called(&key, "c1", "one", &b))
            .await,
        "c1",
        &a,
        &b,
    );
    // A row journalled without a digest (an older client's) matches any call.
    store
        .record_tool_result(&called(&key, "c2", "two", &ArgumentsDigest::NONE))
        .await
        .unwrap();
    let (older, existed) = store
        .record_tool_result(&called(&key, "c2", "two", &b))
        .await
        .unwrap();
    assert!(existed && older.arguments_digest.is_empty());

    // A batch with one mismatching entry is refused whole: c3 is not journalled either.
    let before_batch = journal_head(&*store, &key).await;
    assert_eq!(before_batch.len, before.len + 1);
    assert_mismatch(
        store
            .record_tool_results(&[called(&key, "c3", "three", &a), called(&key, "c1", "x", &b)])
            .await,
        "c1",
        &a,
        &b,
    );
    assert_mismatch(
        store
            .record_tool_results(&[called(&key, "c4", "four", &a), called(&key, "c4", "x", &b)])
            .await,
        "c4",
        &a,
        &b,
    );
    assert_eq!(journal_head(&*store, &key).await, before_batch);
    let answers = store
        .record_tool_results(&[called(&key, "c3", "three", &b), called(&key, "c1", "x", &a)])
        .await
        .unwrap();
    assert_eq!(answers[0].0.arguments_digest, b);
    assert_eq!((answers[1].0.clone(), answers[1].1), (first.clone(), true));

    // Every read returns the digests: the journal, and a load's snapshot.
    store.save(&checkpoint(&key, 2, 1, &["n"])).await.unwrap();
    let digests = |records: &[checkpointd_core::domain::ToolRecord]| {
        records
            .iter()
            .map(|record| {
                (
                    record.call_id.as_str().to_owned(),
                    record.arguments_digest.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let expected = vec![
        ("c1".to_owned(), a.clone()),
        ("c2".to_owned(), ArgumentsDigest::NONE),
        ("c3".to_owned(), b.clone()),
    ];
    assert_eq!(digests(&store.tools(&key).await.unwrap()), expected);
    assert_eq!(digests(&load_latest(&*store, &key).await.tools), expected);
    // Twice: a cache in front of the store answers the second from its entry.
    assert_eq!(digests(&load_latest(&*store, &key).await.tools), expected);
}

pub async fn an_intent_and_its_result_must_carry_the_same_arguments(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    let (a, b) = (digest('a'), digest('b'));
    let recorded = store
        .record_tool_intent(&intended(&key, "mail", &a))
        .await
        .unwrap();
    assert_eq!(recorded.intent.unwrap().arguments_digest, a);
    let before = journal_head(&*store, &key).await;
    assert_mismatch(
        store.record_tool_intent(&intended(&key, "mail", &b)).await,
        "mail",
        &a,
        &b,
    );
    // The result of the intent's call is refused with other arguments, whole in a batch too.
    assert_mismatch(
        store
            .record_tool_result(&called(&key, "mail", "sent", &b))
            .await,
        "mail",
        &a,
        &b,
    );
    assert_mismatch(
        store
            .record_tool_results(&[called(&key, "mail", "sent", &b)])
            .await,
        "mail",
        &a,
        &b,
    );
    assert_eq!(journal_head(&*store, &key).await, before);
    let retried = store
        .record_tool_intent(&intended(&key, "mail", &a))
        .await
        .unwrap();
    assert!(retried.already_recorded);
    let (result, existed) = store
        .record_tool_result(&called(&key, "mail", "sent", &a))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!(result.arguments_digest, a);
    // Once the call has a result, an intent with other arguments is refused against it too.
    let done = store
        .record_tool_intent(&intended(&key, "mail", &ArgumentsDigest::NONE))
        .await
        .unwrap();
    assert!(done.already_recorded && done.result == Some(result));
    assert_mismatch(
        store.record_tool_intent(&intended(&key, "mail", &b)).await,
        "mail",
        &a,
        &b,
    );
}
