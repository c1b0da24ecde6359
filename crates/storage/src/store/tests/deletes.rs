//! DeleteCheckpoints: chosen checkpoints go now, the log and the journal stay, the previous
//! checkpoint becomes the latest, pins are kept and reported, and the optional epoch fences.

use super::{TestBackend, checkpoint, load_latest, run, steps, texts, tool};
use crate::store::{DeletedCheckpoints, Which};
use checkpointd_core::domain::{Epoch, Step};
use checkpointd_core::error::{Error, Missing};

fn outcome(deleted: u64, pinned: &[u64]) -> DeletedCheckpoints {
    DeletedCheckpoints {
        deleted,
        pinned: steps(pinned),
    }
}

pub async fn deleting_chosen_steps_is_idempotent_and_ignores_unknown_ones(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    for step in 1..=4 {
        store.save(&checkpoint(&key, step, 0, &[])).await.unwrap();
    }
    let listed = steps(&[3, 1, 9, 3]);
    let deleted = store.delete_checkpoints(&key, None, &listed).await.unwrap();
    assert_eq!(
        deleted,
        outcome(2, &[]),
        "duplicates count once, unknown steps not at all"
    );
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[2, 4]));
    assert!(
        store
            .load(&key, Which::At(Step::new(3)))
            .await
            .unwrap()
            .is_none()
    );
    // A retry finds nothing left to delete and says so, without an error.
    let again = store.delete_checkpoints(&key, None, &listed).await.unwrap();
    assert_eq!(again, outcome(0, &[]));
    assert_eq!(
        store.delete_checkpoints(&key, None, &[]).await.unwrap(),
        outcome(0, &[])
    );

    let unknown = run("default", "never-saved");
    let refused = store.delete_checkpoints(&unknown, None, &listed).await;
    assert!(
        matches!(refused, Err(Error::NotFound(Missing::Run { .. }))),
        "{refused:?}"
    );
    // Another tenant's run of the same id is another run.
    let elsewhere = run("other", "run-1");
    let refused = store.delete_checkpoints(&elsewhere, None, &listed).await;
    assert!(
        matches!(refused, Err(Error::NotFound(Missing::Run { .. }))),
        "{refused:?}"
    );
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[2, 4]));
}

pub async fn deleting_the_latest_makes_the_previous_one_latest_and_saves_go_on(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    store.save(&checkpoint(&key, 1, 0, &["a"])).await.unwrap();
    let second = store.save(&checkpoint(&key, 2, 1, &["b"])).await.unwrap();
    store
        .record_tool_result(&tool(&key, "c1", "42"))
        .await
        .unwrap();
    let mut third = checkpoint(&key, 3, 2, &["c"]);
    third.label = Some("lg-3".to_owned());
    store.save(&third).await.unwrap();
    // Warm whatever caches the latest checkpoint, so that a stale copy would show.
    assert_eq!(
        load_latest(&*store, &key).await.checkpoint.step,
        Step::new(3)
    );

    let deleted = store
        .delete_checkpoints(&key, None, &steps(&[3]))
        .await
        .unwrap();
    assert_eq!(deleted, outcome(1, &[]));

    // The previous checkpoint is the latest, whole, and still verifies against the journal,
    // which the delete did not touch.
    let latest = load_latest(&*store, &key).await;
    assert_eq!(latest.checkpoint.step, Step::new(2));
    assert_eq!(latest.checkpoint.id, second.id);
    assert_eq!(texts(&latest.checkpoint.messages), ["a", "b"]);
    assert_eq!(latest.tools.len(), 1);
    latest.checkpoint.verify(&latest.tools).unwrap();
    let head = store.latest_head(&key).await.unwrap().unwrap();
    assert_eq!(head.checkpoint.map(|at| at.step), Some(Step::new(2)));
    let info = store.run_info(&key).await.unwrap().unwrap();
    assert_eq!(info.latest_step, Some(Step::new(2)));
    assert_eq!(info.latest_valid_step, Some(Step::new(2)));
    assert_eq!(info.checkpoint_count, 2);
    // The message log keeps the deleted checkpoint's messages: the log is append-only.
    assert_eq!(info.message_count, 3);
    assert_eq!(info.tool_count, 1);
    // The label went with its checkpoint.
    assert_eq!(store.label_step(&key, "lg-3").await.unwrap(), None);

    // The run goes on: a later Save continues the log where it stands, and may even take the
    // freed step and label again.
    let mut again = checkpoint(&key, 3, 3, &["d"]);
    again.label = Some("lg-3".to_owned());
    store.save(&again).await.unwrap();
    store.save(&checkpoint(&key, 4, 4, &[])).await.unwrap();
    let latest = load_latest(&*store, &key).await;
    assert_eq!(latest.checkpoint.step, Step::new(4));
    assert_eq!(texts(&latest.checkpoint.messages), ["a", "b", "c", "d"]);
    latest.checkpoint.verify(&latest.tools).unwrap();
    assert_eq!(
        store.label_step(&key, "lg-3").await.unwrap(),
        Some(Step::new(3))
    );

    // Every checkpoint may go, quarantined ones too; the run, its log and journal stay.
    store.quarantine(&key, Step::new(1), "test").await.unwrap();
    let all = steps(&[1, 2, 3, 4]);
    let deleted = store.delete_checkpoints(&key, None, &all).await.unwrap();
    assert_eq!(deleted, outcome(4, &[]));
    assert!(store.steps(&key).await.unwrap().is_empty());
    assert!(
        store
            .load(&key, Which::LatestBelow(None))
            .await
            .unwrap()
            .is_none()
    );
    let info = store.run_info(&key).await.unwrap().unwrap();
    assert_eq!((info.latest_step, info.checkpoint_count), (None, 0));
    assert_eq!((info.message_count, info.tool_count), (4, 1));
    assert_eq!(store.tools(&key).await.unwrap().len(), 1);
}

pub async fn pinned_checkpoints_are_kept_and_reported(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    let key = run("default", "run-1");
    for step in 1..=3 {
        store.save(&checkpoint(&key, step, 0, &[])).await.unwrap();
    }
    retention
        .pin(&key, Some(Step::new(2)), "operator")
        .await
        .unwrap();
    retention
        .pin(&key, Some(Step::new(3)), "approval:task-1")
        .await
        .unwrap();

    let deleted = store
        .delete_checkpoints(&key, None, &steps(&[3, 2, 1, 7]))
        .await
        .unwrap();
    assert_eq!(deleted, outcome(1, &[2, 3]));
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[2, 3]));

    // Once its last pin goes, the checkpoint may be deleted.
    retention
        .unpin(&key, Some(Step::new(3)), None)
        .await
        .unwrap();
    let deleted = store
        .delete_checkpoints(&key, None, &steps(&[2, 3]))
        .await
        .unwrap();
    assert_eq!(deleted, outcome(1, &[2]));
    assert_eq!(
        load_latest(&*store, &key).await.checkpoint.step,
        Step::new(2)
    );
}

pub async fn deleting_checkpoints_is_fenced_by_an_epoch_when_one_is_given(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    for step in 1..=3 {
        store.save(&checkpoint(&key, step, 0, &[])).await.unwrap();
    }
    store.begin_resume(&key).await.unwrap();
    let epoch = store.begin_resume(&key).await.unwrap();

    let stale = store
        .delete_checkpoints(&key, Some(Epoch::new(epoch.get() - 1)), &steps(&[1]))
        .await;
    assert!(matches!(stale, Err(Error::StaleEpoch(_))), "{stale:?}");
    let unissued = store
        .delete_checkpoints(&key, Some(epoch.next()), &steps(&[1]))
        .await;
    assert!(
        matches!(unissued, Err(Error::EpochNotIssued(_))),
        "{unissued:?}"
    );
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1, 2, 3]));

    let current = store
        .delete_checkpoints(&key, Some(epoch), &steps(&[1]))
        .await
        .unwrap();
    assert_eq!(current, outcome(1, &[]));
    // Without an epoch the delete is not fenced (an operator's, or a framework's own prune).
    let unfenced = store
        .delete_checkpoints(&key, None, &steps(&[2]))
        .await
        .unwrap();
    assert_eq!(unfenced, outcome(1, &[]));
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[3]));
}
