//! A Save's `tool_count`: a checkpoint may cover the journal's first entries only, so a client
//! saves while its own journal writes still land; more than the journal holds is refused.

use super::{TestBackend, checkpoint, load_at, load_latest, message, run, tool};
use checkpointd_core::domain::{
    MessageChain, MessageLog, NewCheckpoint, ToolChain, ToolRecord, checkpoint_checksum,
};
use checkpointd_core::error::Error;

/// The tool chain over the journal's first `count` entries.
fn covered(journal: &[ToolRecord], count: usize) -> ToolChain {
    ToolChain {
        len: count as u64,
        head: count
            .checked_sub(1)
            .map_or([0; 32], |last| journal[last].chain),
    }
}

/// The checksum a client computes for `request` over the given tool chain.
fn client_checksum(
    request: &NewCheckpoint,
    tools: &ToolChain,
) -> checkpointd_core::domain::Checksum {
    checkpoint_checksum(
        &request.run.run_id,
        request.step,
        &request.content_type,
        &request.state,
        &request.metadata,
        &MessageChain::over_messages(&request.messages),
        tools,
    )
}

pub async fn a_save_may_cover_the_journals_first_entries_and_verifies_on_load(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    for call_id in ["c1", "c2", "c3"] {
        store
            .record_tool_result(&tool(&key, call_id, "x"))
            .await
            .unwrap();
    }
    let journal = store.tools(&key).await.unwrap();

    // The client's state reflects c1 only; c2 and c3 landed concurrently.
    let mut first = checkpoint(&key, 1, 0, &["hi"]);
    first.tool_count = Some(1);
    // A checksum over the whole journal is not what this checkpoint covers.
    first.client_checksum = Some(client_checksum(&first, &covered(&journal, 3)));
    let error = store.save(&first).await.unwrap_err();
    assert!(matches!(error, Error::ChecksumMismatch(_)), "{error:?}");
    first.client_checksum = Some(client_checksum(&first, &covered(&journal, 1)));
    let saved = store.save(&first).await.unwrap();
    assert_eq!((saved.tool_count, saved.already_existed), (1, false));
    let loaded = load_latest(store.as_ref(), &key).await;
    assert_eq!(loaded.checkpoint.tool_count, 1);
    assert_eq!(
        loaded.tools.len(),
        3,
        "a load still returns the whole journal"
    );
    loaded.checkpoint.verify(&loaded.tools).unwrap();

    // An identical retry succeeds and changes nothing, even after the journal grew.
    store
        .record_tool_result(&tool(&key, "c4", "x"))
        .await
        .unwrap();
    let again = store.save(&first).await.unwrap();
    assert_eq!(
        (again.id.as_str(), again.tool_count),
        (saved.id.as_str(), 1)
    );
    assert!(again.already_existed);

    // A later checkpoint may cover fewer entries than an earlier one: each verifies alone.
    let mut second = checkpoint(&key, 2, 1, &[]);
    second.tool_count = Some(0);
    assert_eq!(store.save(&second).await.unwrap().tool_count, 0);
    // The journal's exact length, and no count at all, cover the whole journal.
    let mut third = checkpoint(&key, 3, 1, &[]);
    third.tool_count = Some(4);
    assert_eq!(store.save(&third).await.unwrap().tool_count, 4);
    assert_eq!(
        store
            .save(&checkpoint(&key, 4, 1, &[]))
            .await
            .unwrap()
            .tool_count,
        4
    );
    for step in [1, 2, 3, 4] {
        let snapshot = load_at(store.as_ref(), &key, step).await;
        snapshot.checkpoint.verify(&snapshot.tools).unwrap();
    }
}

pub async fn a_save_covering_more_than_the_journal_is_refused_and_changes_nothing(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    store
        .record_tool_result(&tool(&key, "c1", "x"))
        .await
        .unwrap();
    let mut ahead = checkpoint(&key, 1, 0, &[]);
    ahead.messages = vec![message("user", "hi")];
    ahead.tool_count = Some(2);
    let error = store.save(&ahead).await.unwrap_err();
    assert!(matches!(error, Error::JournalBehind(_)), "{error:?}");
    assert!(store.steps(&key).await.unwrap().is_empty());
    let info = store.run_info(&key).await.unwrap().unwrap();
    assert_eq!(
        info.message_count, 0,
        "no message of the refused Save is kept"
    );
    ahead.tool_count = Some(u64::MAX);
    let error = store.save(&ahead).await.unwrap_err();
    assert!(matches!(error, Error::JournalBehind(_)), "{error:?}");
    ahead.tool_count = Some(1);
    assert_eq!(store.save(&ahead).await.unwrap().tool_count, 1);
}
