//! Fencing epochs and recovery: stale and never-issued epochs, rewind, and a newer owner
//! rewriting steps.

use super::{TestBackend, checkpoint, load_at, load_latest, run, steps, texts, tool};
use crate::store::CheckpointStore;
use checkpointd_core::domain::{Epoch, MessageChain, MessageLog, RunKey, Step};
use checkpointd_core::error::{Error, Missing};

/// Truncates the log to what the checkpoint at `step` covers, as Resume does once it restores it.
async fn rewind_to_step(store: &dyn CheckpointStore, run: &RunKey, epoch: Epoch, step: u64) {
    let restored = load_at(store, run, step).await;
    store
        .rewind(
            run,
            epoch,
            MessageChain::over_messages(&restored.checkpoint.messages),
        )
        .await
        .unwrap();
}

pub async fn a_stale_epoch_is_fenced_and_leaves_no_trace(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    assert_eq!(store.begin_resume(&key).await.unwrap(), Epoch::new(1));
    let error = store
        .save(&checkpoint(&key, 1, 0, &["hi"]))
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    let error = store
        .record_tool_result(&tool(&key, "c1", "x"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    assert!(store.steps(&key).await.unwrap().is_empty());
    assert!(store.tools(&key).await.unwrap().is_empty());
    assert_eq!(store.begin_resume(&key).await.unwrap(), Epoch::new(2));

    // The current owner's writes go through.
    let mut current = checkpoint(&key, 1, 0, &["hi"]);
    current.epoch = Epoch::new(2);
    store.save(&current).await.unwrap();
    let mut result = tool(&key, "c1", "x");
    result.epoch = Epoch::new(2);
    store.record_tool_result(&result).await.unwrap();
}

pub async fn an_epoch_never_issued_is_refused(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    store.begin_resume(&key).await.unwrap();
    let mut ahead = checkpoint(&key, 1, 0, &[]);
    ahead.epoch = Epoch::new(2);
    let error = store.save(&ahead).await.unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    let mut result = tool(&key, "c1", "x");
    result.epoch = Epoch::new(5);
    let error = store.record_tool_result(&result).await.unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    let error = store
        .rewind(&key, Epoch::new(2), MessageChain::EMPTY)
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    assert!(store.steps(&key).await.unwrap().is_empty());
    assert!(store.tools(&key).await.unwrap().is_empty());
}

pub async fn rewind_is_fenced_by_epoch_and_needs_the_run(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    let error = store
        .rewind(&key, Epoch::new(0), MessageChain::EMPTY)
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::NotFound(Missing::Run { .. })),
        "{error:?}"
    );
    store.begin_resume(&key).await.unwrap();
    store.begin_resume(&key).await.unwrap();
    let error = store
        .rewind(&key, Epoch::new(1), MessageChain::EMPTY)
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    store
        .rewind(&key, Epoch::new(2), MessageChain::EMPTY)
        .await
        .unwrap();
}

pub async fn rewind_truncates_the_log_and_a_newer_epoch_replaces_a_step(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    store.save(&checkpoint(&key, 1, 0, &["a"])).await.unwrap();
    let old = store
        .save(&checkpoint(&key, 2, 1, &["b", "c"]))
        .await
        .unwrap();
    let epoch = store.begin_resume(&key).await.unwrap();
    assert_eq!(epoch, Epoch::new(1));
    let error = store
        .rewind(&key, Epoch::new(0), MessageChain::EMPTY)
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    rewind_to_step(&*store, &key, epoch, 1).await;

    let mut rewrite = checkpoint(&key, 3, 1, &["x"]);
    let error = store.save(&rewrite).await.unwrap_err();
    assert!(
        matches!(error, Error::StaleEpoch(_) | Error::EpochNotIssued(_)),
        "{error:?}"
    );
    // The new owner replaces step 2 (written at an older epoch) with its own content.
    rewrite.epoch = epoch;
    rewrite.step = Step::new(2);
    let replaced = store.save(&rewrite).await.unwrap();
    assert!(!replaced.already_existed);
    assert_ne!(replaced.id, old.id);
    let latest = load_latest(&*store, &key).await;
    assert_eq!(latest.checkpoint.id, replaced.id);
    assert_eq!(latest.checkpoint.epoch, epoch);
    assert_eq!(texts(&latest.checkpoint.messages), ["a", "x"]);
    latest.checkpoint.verify(&latest.tools).unwrap();
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1, 2]));
}

pub async fn a_quarantined_step_may_be_rewritten_by_the_runs_owner(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    store.save(&checkpoint(&key, 1, 0, &["a"])).await.unwrap();
    let request = checkpoint(&key, 2, 1, &["b"]);
    let damaged = store.save(&request).await.unwrap();
    store
        .quarantine(&key, Step::new(2), "damaged")
        .await
        .unwrap();
    // Even identical content is written again: the stored copy is the one not to trust.
    let rewritten = store.save(&request).await;
    // The log already holds step 2's message, so the same offset no longer fits...
    assert!(
        matches!(rewritten, Err(Error::InvalidField { .. })),
        "{rewritten:?}"
    );
    // ...until the owner rewinds it to step 1's log, as Resume does.
    let epoch = store.begin_resume(&key).await.unwrap();
    rewind_to_step(&*store, &key, epoch, 1).await;
    let mut again = request.clone();
    again.epoch = epoch;
    let saved = store.save(&again).await.unwrap();
    assert!(!saved.already_existed);
    assert_ne!(saved.id, damaged.id);
    let at_two = load_at(&*store, &key, 2).await;
    assert_eq!(at_two.checkpoint.id, saved.id);
    assert_eq!(at_two.checkpoint.quarantine, None);
    assert_eq!(texts(&at_two.checkpoint.messages), ["a", "b"]);
    at_two.checkpoint.verify(&at_two.tools).unwrap();
}
