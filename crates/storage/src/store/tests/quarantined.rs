//! What a store keeps about quarantined checkpoints for the answers that pass over them: the
//! time of the quarantine, the checkpoint's identity in listings, and whether a load has any
//! checkpoint above the one it returns, told in the load itself.

use std::time::SystemTime;

use super::{TestBackend, checkpoint, load_at, run};
use crate::store::Which;
use checkpointd_core::domain::{ListQuery, Step};

pub async fn a_latest_load_says_whether_quarantined_checkpoints_lie_above_it(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    for step in 1..=3 {
        store
            .save(&checkpoint(&key, step, step - 1, &["m"]))
            .await
            .unwrap();
    }
    let latest = |below| {
        let store = store.clone();
        let key = key.clone();
        async move {
            let snapshot = store.load(&key, Which::LatestBelow(below)).await.unwrap();
            let snapshot = snapshot.expect("a checkpoint below");
            (snapshot.checkpoint.step, snapshot.has_newer)
        }
    };
    assert_eq!(latest(None).await, (Step::new(3), false));
    assert_eq!(latest(Some(Step::new(3))).await, (Step::new(2), true));
    let head = store.latest_head(&key).await.unwrap().unwrap();
    assert!(!head.has_newer, "nothing lies above step 3");

    let before = SystemTime::now();
    store.quarantine(&key, Step::new(3), "bad").await.unwrap();
    let after = SystemTime::now();
    assert_eq!(latest(None).await, (Step::new(2), true));
    let head = store.latest_head(&key).await.unwrap().unwrap();
    assert_eq!(head.checkpoint.unwrap().step, Step::new(2));
    assert!(head.has_newer, "quarantined step 3 lies above step 2");

    let quarantine = load_at(&*store, &key, 3)
        .await
        .checkpoint
        .quarantine
        .unwrap();
    let at = quarantine
        .quarantined_at
        .expect("the quarantine's time is kept");
    // Stores keep microseconds: allow the truncation below `before`.
    let slack = std::time::Duration::from_millis(1);
    assert!(at + slack >= before && at <= after + slack, "{at:?}");
    // A second quarantine keeps the first reason and its time.
    store.quarantine(&key, Step::new(3), "again").await.unwrap();
    let listed = store
        .list(&key, &ListQuery::ascending(None, 10))
        .await
        .unwrap();
    assert_eq!(listed.len(), 3);
    let quarantined = listed[2].quarantine.as_ref().unwrap();
    assert_eq!(
        (quarantined.reason.as_str(), quarantined.quarantined_at),
        ("bad", Some(at))
    );
    assert_eq!(listed[2].id, load_at(&*store, &key, 3).await.checkpoint.id);
    assert_ne!(listed[1].id, listed[2].id);
    assert_eq!(listed[1].quarantine, None);

    // Once the quarantined checkpoint is gone, nothing lies above the latest again.
    store
        .delete_checkpoints(&key, None, &[Step::new(3)])
        .await
        .unwrap();
    assert_eq!(latest(None).await, (Step::new(2), false));
    assert!(!store.latest_head(&key).await.unwrap().unwrap().has_newer);

    // A run whose every checkpoint is quarantined: its head names none, with some above.
    let other = run("default", "run-2");
    store.save(&checkpoint(&other, 1, 0, &[])).await.unwrap();
    store.quarantine(&other, Step::new(1), "bad").await.unwrap();
    let head = store.latest_head(&other).await.unwrap().unwrap();
    assert_eq!((head.checkpoint, head.has_newer), (None, true));
}
