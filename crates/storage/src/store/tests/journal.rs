//! Tool intents and journal repairs: intents share the journal's sequence and chain with
//! results, are fenced and idempotent, and an operator's repair rewrites the journal's tail in
//! one transaction that quarantines what covered it and records who did it.

use std::time::SystemTime;

use super::{TestBackend, checkpoint, load_latest, run, steps, tool};
use crate::store::Which;
use checkpointd_core::domain::{
    CallId, EntryKind, Epoch, JournalDiagnosis, JournalRepair, NewToolIntent, Repair, RunKey, Step,
    ToolChain, verify_tool_journal,
};
use checkpointd_core::error::Error;
use checkpointd_core::plan::plan_repair;

/// A RecordToolIntent at step 1, epoch 0.
pub fn intent(run: &RunKey, call_id: &str) -> NewToolIntent {
    NewToolIntent {
        run: run.clone(),
        call_id: CallId::parse(call_id).unwrap(),
        tool_name: "send_email".to_owned(),
        step: Step::new(1),
        epoch: Epoch::new(0),
        arguments_digest: Default::default(),
    }
}

fn repair(run: &RunKey, call_id: &str, repair: Repair) -> JournalRepair {
    JournalRepair {
        run: run.clone(),
        call_id: CallId::parse(call_id).unwrap(),
        actor: "alice".to_owned(),
        repair,
    }
}

async fn tool_head(backend: &impl TestBackend, key: &RunKey) -> ToolChain {
    backend
        .store()
        .latest_head(key)
        .await
        .unwrap()
        .expect("the run exists")
        .tools
}

pub async fn intents_and_results_share_one_journal_that_checkpoints_cover(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "intents");
    store
        .record_tool_result(&tool(&key, "read", "r"))
        .await
        .unwrap();
    let journalled = store
        .record_tool_intent(&intent(&key, "mail"))
        .await
        .unwrap();
    let mail = journalled.intent.expect("a new intent");
    assert_eq!((mail.seq, mail.kind), (2, EntryKind::Intent));
    assert!(!journalled.already_recorded && journalled.result.is_none());
    store
        .record_tool_result(&tool(&key, "mail", "sent"))
        .await
        .unwrap();
    let journal = store.tools(&key).await.unwrap();
    let kinds: Vec<(u64, EntryKind)> = journal.iter().map(|r| (r.seq, r.kind)).collect();
    assert_eq!(
        kinds,
        [
            (1, EntryKind::Result),
            (2, EntryKind::Intent),
            (3, EntryKind::Result)
        ]
    );
    verify_tool_journal(&journal).unwrap();
    assert!(JournalDiagnosis::of(&journal).in_doubt.is_empty());
    assert_eq!(tool_head(backend, &key).await.len, 3);
    let saved = store.save(&checkpoint(&key, 1, 0, &["hi"])).await.unwrap();
    assert_eq!(saved.tool_count, 3);
    let snapshot = load_latest(store.as_ref(), &key).await;
    snapshot.checkpoint.verify(&snapshot.tools).unwrap();
    assert_eq!(snapshot.tools, journal);
}

pub async fn a_repeated_intent_answers_with_what_the_call_holds(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "repeat");
    let first = store
        .record_tool_intent(&intent(&key, "mail"))
        .await
        .unwrap();
    let again = store
        .record_tool_intent(&intent(&key, "mail"))
        .await
        .unwrap();
    assert!(again.already_recorded);
    assert_eq!(again.intent, first.intent);
    let in_doubt = JournalDiagnosis::of(&store.tools(&key).await.unwrap()).in_doubt;
    assert_eq!(in_doubt.len(), 1);
    assert_eq!(in_doubt[0].call_id.as_str(), "mail");
    let (result, _) = store
        .record_tool_result(&tool(&key, "mail", "sent"))
        .await
        .unwrap();
    let done = store
        .record_tool_intent(&intent(&key, "mail"))
        .await
        .unwrap();
    assert!(done.already_recorded);
    assert_eq!(done.result, Some(result));
    // A call that completed without an intent never gets one after its result.
    store
        .record_tool_result(&tool(&key, "plain", "x"))
        .await
        .unwrap();
    let late = store
        .record_tool_intent(&intent(&key, "plain"))
        .await
        .unwrap();
    assert!(late.already_recorded && late.intent.is_none() && late.result.is_some());
    assert_eq!(store.tools(&key).await.unwrap().len(), 3);
}

pub async fn a_tool_intent_is_fenced_by_epoch(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "fenced-intent");
    assert_eq!(store.begin_resume(&key).await.unwrap(), Epoch::new(1));
    let stale = store.record_tool_intent(&intent(&key, "mail")).await;
    assert!(
        matches!(stale, Err(Error::StaleEpoch(_) | Error::EpochNotIssued(_))),
        "{stale:?}"
    );
    assert!(store.tools(&key).await.unwrap().is_empty());
    let current = NewToolIntent {
        epoch: Epoch::new(1),
        ..intent(&key, "mail")
    };
    assert!(store.record_tool_intent(&current).await.is_ok());
}

pub async fn a_repair_rewrites_the_journal_from_a_corrupt_entry_and_records_who(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "repair");
    store.save(&checkpoint(&key, 1, 0, &["a"])).await.unwrap();
    store
        .record_tool_result(&tool(&key, "first", "1"))
        .await
        .unwrap();
    store
        .record_tool_intent(&intent(&key, "mail"))
        .await
        .unwrap();
    store
        .record_tool_result(&tool(&key, "mail", "sent"))
        .await
        .unwrap();
    store.save(&checkpoint(&key, 2, 1, &["b"])).await.unwrap();
    backend.damage_tool_output(&key, 1).await;

    let journal = store.tools(&key).await.unwrap();
    let diagnosis = JournalDiagnosis::of(&journal);
    assert_eq!(diagnosis.corrupt_call_ids(), ["first"]);
    assert!(diagnosis.in_doubt.iter().any(|call| call.corrupt));
    let head = tool_head(backend, &key).await;
    let now = SystemTime::now();
    let rewrite = plan_repair(
        &journal,
        head,
        &repair(&key, "first", Repair::MarkDone(b"fixed".to_vec())),
        now,
    )
    .unwrap();
    assert_eq!(store.rewrite_journal(&rewrite).await.unwrap(), steps(&[2]));

    let repaired = store.tools(&key).await.unwrap();
    verify_tool_journal(&repaired).unwrap();
    assert_eq!(repaired.len(), 3);
    assert_eq!(repaired[0].output, b"fixed");
    assert_eq!(tool_head(backend, &key).await, rewrite.head);
    // Step 2 covered the old journal; step 1 covered none of it and is still restorable.
    assert_eq!(
        load_latest(store.as_ref(), &key).await.checkpoint.step,
        Step::new(1)
    );
    let quarantined = store
        .load(&key, Which::At(Step::new(2)))
        .await
        .unwrap()
        .unwrap();
    assert!(quarantined.checkpoint.quarantine.is_some());
    let actions = store.journal_actions(&key).await.unwrap();
    assert_eq!(actions.len(), 1);
    assert_eq!(
        (
            actions[0].call_id.as_str(),
            actions[0].action.as_str(),
            actions[0].actor.as_str()
        ),
        ("first", "mark_done", "alice")
    );
    // A repair planned from the journal as it was is refused now, and changes nothing.
    let stale = store.rewrite_journal(&rewrite).await;
    assert!(matches!(stale, Err(Error::JournalState(_))), "{stale:?}");
    assert_eq!(store.journal_actions(&key).await.unwrap().len(), 1);
}

pub async fn an_in_doubt_call_marked_done_gets_its_result_appended(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "mark-done");
    store
        .record_tool_intent(&intent(&key, "mail"))
        .await
        .unwrap();
    store.save(&checkpoint(&key, 1, 0, &["a"])).await.unwrap();
    let journal = store.tools(&key).await.unwrap();
    let head = tool_head(backend, &key).await;
    let rewrite = plan_repair(
        &journal,
        head,
        &repair(&key, "mail", Repair::MarkDone(b"sent by hand".to_vec())),
        SystemTime::now(),
    )
    .unwrap();
    assert!(store.rewrite_journal(&rewrite).await.unwrap().is_empty());
    let repaired = store.tools(&key).await.unwrap();
    verify_tool_journal(&repaired).unwrap();
    assert_eq!(repaired[1].kind, EntryKind::Result);
    assert_eq!(repaired[1].output, b"sent by hand");
    assert!(JournalDiagnosis::of(&repaired).in_doubt.is_empty());
    // Appending covers nothing stored: the checkpoint stays restorable.
    let snapshot = load_latest(store.as_ref(), &key).await;
    snapshot.checkpoint.verify(&snapshot.tools).unwrap();
    store.delete_run(&key).await.unwrap();
    assert!(store.journal_actions(&key).await.unwrap().is_empty());
}
