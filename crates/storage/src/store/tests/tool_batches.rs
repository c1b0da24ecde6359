//! RecordToolResults: a batch journals like that many single results, in order, atomically and
//! fenced once.

use super::{TestBackend, run, tool};
use checkpointd_core::domain::{Epoch, NewToolResult, verify_tool_journal};
use checkpointd_core::error::Error;

pub async fn a_batch_journals_in_order_and_answers_each_entry_like_a_single_result(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    assert!(store.record_tool_results(&[]).await.unwrap().is_empty());
    assert!(
        !store.run_exists(&key).await.unwrap(),
        "an empty batch creates nothing"
    );
    let (c1, _) = store
        .record_tool_result(&tool(&key, "c1", "1"))
        .await
        .unwrap();
    let batch = [
        tool(&key, "c2", "2"),
        // Known before the batch: the stored result stands, whatever this output says.
        tool(&key, "c1", "other"),
        tool(&key, "c3", "3"),
        // Repeated within the batch: the first entry stands, as a retry would find it.
        tool(&key, "c2", "again"),
    ];
    let answers = store.record_tool_results(&batch).await.unwrap();
    let flags: Vec<bool> = answers.iter().map(|(_, existed)| *existed).collect();
    assert_eq!(flags, [false, true, false, true]);
    let seqs: Vec<u64> = answers.iter().map(|(record, _)| record.seq).collect();
    assert_eq!(seqs, [2, 1, 3, 2]);
    assert_eq!(answers[1].0, c1);
    assert_eq!(answers[3].0, answers[0].0);
    assert_eq!(answers[0].0.output, b"2");

    // The answers are what the journal reads back, and the chain verifies.
    let journal = store.tools(&key).await.unwrap();
    assert_eq!(
        journal,
        vec![c1.clone(), answers[0].0.clone(), answers[2].0.clone()]
    );
    verify_tool_journal(&journal).unwrap();
    // A retried batch changes nothing and answers with the stored records.
    let retried = store.record_tool_results(&batch).await.unwrap();
    assert!(retried.iter().all(|(_, existed)| *existed));
    assert_eq!(store.tools(&key).await.unwrap(), journal);
    let head = store.latest_head(&key).await.unwrap().unwrap();
    assert_eq!(head.tools.len, 3);
    assert_eq!(head.tools.head, journal[2].chain);
}

pub async fn a_batch_is_fenced_once_and_writes_all_or_nothing(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    assert_eq!(store.begin_resume(&key).await.unwrap(), Epoch::new(1));
    let at = |epoch: u64, call_id: &str| NewToolResult {
        epoch: Epoch::new(epoch),
        ..tool(&key, call_id, "x")
    };
    for epoch in [0, 2] {
        let error = store
            .record_tool_results(&[at(epoch, "c1"), at(epoch, "c2")])
            .await
            .unwrap_err();
        assert!(
            matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
            "{error:?}"
        );
    }
    assert!(store.tools(&key).await.unwrap().is_empty());
    let answers = store
        .record_tool_results(&[at(1, "c1"), at(1, "c2")])
        .await
        .unwrap();
    assert_eq!(answers.len(), 2);
    // A single result after the batch continues the same chain.
    let (third, existed) = store.record_tool_result(&at(1, "c3")).await.unwrap();
    assert!(!existed);
    assert_eq!(third.seq, 3);
    verify_tool_journal(&store.tools(&key).await.unwrap()).unwrap();
}
