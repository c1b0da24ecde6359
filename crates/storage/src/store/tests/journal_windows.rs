//! A load reads the part of the tool journal its scope returns and the window of the log it
//! asks for, with the chain digests stored around them, and what it reads verifies from those
//! digests alone: damage inside the window, or to a digest it stands on, fails; damage before
//! it is not read at all.

use super::{Damage, TestBackend, checkpoint, run, tool};
use crate::store::{CheckpointStore, Snapshot, Which};
use checkpointd_core::domain::{
    JournalScope, MessageWindow, RunKey, Step, ToolWindow, verify_tool_window,
};

/// Journal entries 1-2 at step 1, 3-4 at step 2, 5 at step 3; checkpoints at step 1 (covering
/// entries 1-2, messages a b), step 2 (1-4, a b c d) and step 4 (1-5, no new message).
async fn journalled_run(store: &dyn CheckpointStore, key: &RunKey) {
    let record = |call_id: &'static str, step: u64| {
        let mut result = tool(key, call_id, call_id);
        result.step = Step::new(step);
        result
    };
    for (call_id, step) in [("c1", 1), ("c2", 1)] {
        store
            .record_tool_result(&record(call_id, step))
            .await
            .unwrap();
    }
    store
        .save(&checkpoint(key, 1, 0, &["a", "b"]))
        .await
        .unwrap();
    for (call_id, step) in [("c3", 2), ("c4", 2)] {
        store
            .record_tool_result(&record(call_id, step))
            .await
            .unwrap();
    }
    store
        .save(&checkpoint(key, 2, 2, &["c", "d"]))
        .await
        .unwrap();
    store.record_tool_result(&record("c5", 3)).await.unwrap();
    store.save(&checkpoint(key, 4, 4, &[])).await.unwrap();
}

async fn read(
    store: &dyn CheckpointStore,
    key: &RunKey,
    step: u64,
    window: MessageWindow,
    journal: JournalScope,
) -> Snapshot {
    store
        .load_window(key, Which::At(Step::new(step)), window, journal)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no checkpoint at step {step}"))
}

/// Both verifications a load makes: the journal window link by link, then the checksum.
fn verified(snapshot: &Snapshot) -> Result<(), String> {
    verify_tool_window(&snapshot.tools, &snapshot.tool_window)?;
    snapshot
        .checkpoint
        .verify_window(&snapshot.tools, &snapshot.tool_window)
}

fn seqs(snapshot: &Snapshot) -> Vec<u64> {
    snapshot.tools.iter().map(|record| record.seq).collect()
}

pub async fn a_journal_scope_reads_from_its_steps_first_entry_and_verifies_from_there(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    journalled_run(store.as_ref(), &key).await;
    let whole = store.tools(&key).await.unwrap();
    let all = MessageWindow::ALL;

    let at_two = read(store.as_ref(), &key, 2, all, JournalScope::Step).await;
    assert_eq!(seqs(&at_two), [3, 4, 5]);
    assert_eq!(at_two.tool_window.from, 3);
    assert_eq!(at_two.tool_window.before, Some(whole[1].chain));
    verified(&at_two).unwrap();

    let nothing = read(store.as_ref(), &key, 2, all, JournalScope::None).await;
    assert!(nothing.tools.is_empty());
    assert_eq!(nothing.tool_window.covered, Some(whole[3].chain));
    verified(&nothing).unwrap();

    // A step without entries reads none, from past the journal's end.
    let at_four = read(store.as_ref(), &key, 4, all, JournalScope::Step).await;
    assert!(at_four.tools.is_empty());
    assert_eq!(at_four.tool_window.from, 6);
    verified(&at_four).unwrap();

    for step in [1, 2, 4] {
        let first = read(store.as_ref(), &key, step, all, JournalScope::Step).await;
        let from_one = read(store.as_ref(), &key, 1, all, JournalScope::Step).await;
        verified(&first).unwrap();
        assert_eq!(from_one.tools, whole, "step 1's entries start the journal");
        let every = read(store.as_ref(), &key, step, all, JournalScope::All).await;
        assert_eq!(
            (every.tools.as_slice(), every.tool_window),
            (whole.as_slice(), ToolWindow::WHOLE)
        );
        verified(&every).unwrap();
    }
    let latest = store
        .load_window(&key, Which::LatestBelow(None), all, JournalScope::Step)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.checkpoint.step, Step::new(4));
    verified(&latest).unwrap();
}

pub async fn damage_in_a_journal_window_or_to_a_digest_it_stands_on_fails_it(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let all = MessageWindow::ALL;
    let damaged = |name: &'static str| run("default", name);

    // The digest stored before step 2's window: the recomputed chain disagrees with entry 3's.
    let key = damaged("before");
    journalled_run(store.as_ref(), &key).await;
    backend.damage(&key, Damage::ToolChain(2)).await;
    let snapshot = read(store.as_ref(), &key, 2, all, JournalScope::Step).await;
    assert!(verify_tool_window(&snapshot.tools, &snapshot.tool_window).is_err());

    // An entry inside the window.
    let key = damaged("inside");
    journalled_run(store.as_ref(), &key).await;
    backend.damage_tool_output(&key, 4).await;
    let snapshot = read(store.as_ref(), &key, 2, all, JournalScope::Step).await;
    assert!(verify_tool_window(&snapshot.tools, &snapshot.tool_window).is_err());
    // Past the checkpoint's entries too: every entry returned is verified.
    let key = damaged("after");
    journalled_run(store.as_ref(), &key).await;
    backend.damage(&key, Damage::ToolChain(5)).await;
    let snapshot = read(store.as_ref(), &key, 2, all, JournalScope::Step).await;
    assert!(verify_tool_window(&snapshot.tools, &snapshot.tool_window).is_err());

    // The digest standing for the entries a scope leaves out: the checksum disagrees.
    let key = damaged("covered");
    journalled_run(store.as_ref(), &key).await;
    backend.damage(&key, Damage::ToolChain(4)).await;
    let snapshot = read(store.as_ref(), &key, 2, all, JournalScope::None).await;
    verify_tool_window(&snapshot.tools, &snapshot.tool_window).unwrap();
    assert!(verified(&snapshot).is_err());

    // An entry before the window is not read, so it cannot fail the load (Validate and the
    // scrub read it); the whole journal still fails.
    let key = damaged("outside");
    journalled_run(store.as_ref(), &key).await;
    backend.damage_tool_output(&key, 1).await;
    verified(&read(store.as_ref(), &key, 2, all, JournalScope::Step).await).unwrap();
    assert!(verified(&read(store.as_ref(), &key, 2, all, JournalScope::All).await).is_err());
}

pub async fn damage_in_a_message_window_or_to_the_digest_at_its_offset_fails_it(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let from_two = MessageWindow::new(2, usize::MAX);
    let none = JournalScope::None;
    let cases = [
        ("sound", None, true),
        ("after-offset", Some(Damage::MessageContent(3)), false),
        ("digest-at-offset", Some(Damage::MessageChain(1)), false),
        ("before-offset", Some(Damage::MessageContent(0)), true),
    ];
    for (name, damage, sound) in cases {
        let key = run("default", name);
        journalled_run(store.as_ref(), &key).await;
        if let Some(damage) = damage {
            backend.damage(&key, damage).await;
        }
        let snapshot = read(store.as_ref(), &key, 2, from_two, none).await;
        assert_eq!(snapshot.checkpoint.messages_from, 2, "{name}");
        assert_eq!(verified(&snapshot).is_ok(), sound, "{name}");
    }
}
