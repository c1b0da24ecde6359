//! Corruption stays visible to every reader until it is repaired (DESIGN contract 13): every
//! load and Resume after the quarantine lists what it passed over, not only the read that
//! found it; an operator's delete or a newer valid save above makes the answers quiet again.

use checkpointd_core::domain::{PassedOver, Restored, RunKey, Step};
use checkpointd_storage::store::tests::{TestBackend, checkpoint, run, steps};

use crate::service::Engine;

/// The steps, ids and reasons of what an answer passed over; every one says since when.
fn passed(passed_over: &[PassedOver]) -> Vec<(Step, String)> {
    passed_over
        .iter()
        .map(|checkpoint| {
            assert!(!checkpoint.reason.is_empty(), "{checkpoint:?}");
            assert!(checkpoint.quarantined_at.is_some(), "{checkpoint:?}");
            (checkpoint.step, checkpoint.checkpoint_id.clone())
        })
        .collect()
}

async fn saved_ids(engine: &Engine, key: &RunKey, upto: u64) -> Vec<(Step, String)> {
    let mut ids = Vec::new();
    for step in 1..=upto {
        let saved = engine
            .save(&checkpoint(key, step, step - 1, &["m"]))
            .await
            .unwrap();
        ids.push((Step::new(step), saved.id));
    }
    ids
}

pub(crate) async fn every_read_reports_quarantined_checkpoints_until_they_are_repaired(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let engine = Engine::new(store.clone());
    let key = run("default", "run-1");
    let ids = saved_ids(&engine, &key, 4).await;
    backend.damage_state(&key, Step::new(4)).await;
    backend.damage_state(&key, Step::new(3)).await;
    let newest_first = vec![ids[3].clone(), ids[2].clone()];

    let first = engine.load_latest(&key).await.unwrap();
    assert_eq!(first.checkpoint.step, Step::new(2));
    assert_eq!(first.skipped_steps, steps(&[4, 3]));
    assert_eq!(passed(&first.passed_over), newest_first);
    let metadata = &first.passed_over[0].metadata;
    assert_eq!(metadata.get("note").map(String::as_str), Some("step 4"));

    // Another reader (another process, in effect: an engine of its own) and a second read:
    // nothing is found corrupt any more, yet both still say what they passed over.
    for reader in [Engine::new(store.clone()), engine.clone()] {
        let again: Restored = reader.load_latest(&key).await.unwrap();
        assert_eq!(again.checkpoint.step, Step::new(2));
        assert!(again.skipped_steps.is_empty(), "today's meaning is kept");
        assert_eq!(again.passed_over, first.passed_over);
    }
    let resumed = engine.resume(&key).await.unwrap();
    assert_eq!(resumed.checkpoint.unwrap().step, Step::new(2));
    assert_eq!(resumed.skipped_steps, steps(&[4, 3]));
    assert_eq!(resumed.passed_over, first.passed_over);

    // The operator drops them: quiet from then on.
    store
        .delete_checkpoints(&key, None, &steps(&[4, 3]))
        .await
        .unwrap();
    for _ in 0..2 {
        let quiet = engine.load_latest(&key).await.unwrap();
        assert_eq!(quiet.checkpoint.step, Step::new(2));
        assert!(quiet.passed_over.is_empty() && quiet.skipped_steps.is_empty());
    }
    assert!(engine.resume(&key).await.unwrap().passed_over.is_empty());
}

pub(crate) async fn a_newer_valid_save_above_quarantined_checkpoints_makes_reads_quiet(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let engine = Engine::new(store.clone());
    let key = run("default", "run-1");
    let ids = saved_ids(&engine, &key, 3).await;
    backend.damage_state(&key, Step::new(3)).await;
    let first = engine.load_latest(&key).await.unwrap();
    assert_eq!(passed(&first.passed_over), vec![ids[2].clone()]);
    let again = engine.load_latest(&key).await.unwrap();
    assert_eq!(passed(&again.passed_over), vec![ids[2].clone()]);

    // Without a Resume nothing rewound the log: step 4 continues after step 3's message.
    engine.save(&checkpoint(&key, 4, 3, &["n"])).await.unwrap();
    for _ in 0..2 {
        let quiet = engine.load_latest(&key).await.unwrap();
        assert_eq!(quiet.checkpoint.step, Step::new(4));
        assert!(quiet.passed_over.is_empty() && quiet.skipped_steps.is_empty());
    }
    let resumed = engine.resume(&key).await.unwrap();
    assert_eq!(resumed.checkpoint.unwrap().step, Step::new(4));
    assert!(resumed.passed_over.is_empty());
}

/// A Resume that restores nothing (every checkpoint quarantined) reports every one.
pub(crate) async fn a_resume_from_scratch_reports_every_quarantined_checkpoint(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let engine = Engine::new(store.clone());
    let key = run("default", "run-1");
    let ids = saved_ids(&engine, &key, 2).await;
    backend.damage_state(&key, Step::new(2)).await;
    backend.damage_state(&key, Step::new(1)).await;
    for _ in 0..2 {
        let resumed = engine.resume(&key).await.unwrap();
        assert!(resumed.checkpoint.is_none());
        assert_eq!(resumed.skipped_steps, steps(&[2, 1]));
        assert_eq!(
            passed(&resumed.passed_over),
            vec![ids[1].clone(), ids[0].clone()]
        );
    }
}
