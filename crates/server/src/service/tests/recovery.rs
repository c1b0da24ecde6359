//! Recovery past a damaged checkpoint: Resume restores the one before and rewinds the log.

use crate::service::Engine;
use checkpointd_core::domain::{Epoch, Step};
use checkpointd_storage::store::tests::{TestBackend, checkpoint, load_at, run, steps, texts};

pub(crate) async fn resume_skips_a_damaged_checkpoint_and_rewinds_to_the_one_before(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let engine = Engine::new(store.clone());
    let key = run("default", "run-1");
    store.save(&checkpoint(&key, 1, 0, &["a"])).await.unwrap();
    store.save(&checkpoint(&key, 2, 1, &["b"])).await.unwrap();
    backend.damage_state(&key, Step::new(2)).await;

    let resumed = engine.resume(&key).await.unwrap();
    assert_eq!(resumed.epoch, Epoch::new(1));
    assert_eq!(resumed.checkpoint.unwrap().step, Step::new(1));
    assert_eq!(resumed.skipped_steps, steps(&[2]));
    let at_two = load_at(&*store, &key, 2).await;
    assert!(at_two.checkpoint.quarantine.is_some());

    // The log was rewound to step 1's single message, so the new owner continues from there,
    // replacing the quarantined step 2.
    let mut again = checkpoint(&key, 2, 1, &["b2"]);
    again.epoch = Epoch::new(1);
    let saved = store.save(&again).await.unwrap();
    let latest = engine.load_latest(&key).await.unwrap();
    assert_eq!(latest.checkpoint.id, saved.id);
    assert_eq!(latest.checkpoint.epoch, Epoch::new(1));
    assert_eq!(texts(&latest.checkpoint.messages), ["a", "b2"]);
    assert!(latest.skipped_steps.is_empty());
}
