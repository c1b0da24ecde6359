//! Reads and the run's lifecycle: which checkpoint a load picks, quarantine, damaged rows,
//! listing, existence, deletion, the latest head, and tenants kept apart.

use super::{TestBackend, checkpoint, load_at, load_latest, run, steps, texts, tool};
use crate::store::{CheckpointStore, Which};
use checkpointd_core::domain::{Epoch, ListQuery, RunKey, Step, ToolChain, ToolRecord};
use checkpointd_core::error::{Error, Missing};

/// Saves step 1 at message offset 0 and journals call `c1` as new: what only a run with no
/// history left accepts. Returns the journalled record.
async fn starts_afresh(store: &dyn CheckpointStore, key: &RunKey, text: &str) -> ToolRecord {
    store.save(&checkpoint(key, 1, 0, &[text])).await.unwrap();
    let (record, existed) = store
        .record_tool_result(&tool(key, "c1", text))
        .await
        .unwrap();
    assert!(!existed, "call c1 is new to {key}");
    assert_eq!((record.seq, record.output.as_slice()), (1, text.as_bytes()));
    record
}

pub async fn load_picks_the_latest_below_a_step_or_exactly_one(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    assert!(
        store
            .load(&key, Which::LatestBelow(None))
            .await
            .unwrap()
            .is_none()
    );
    store
        .save(&checkpoint(&key, 1, 0, &["hi", "there"]))
        .await
        .unwrap();
    store
        .save(&checkpoint(&key, 4, 2, &["more"]))
        .await
        .unwrap();
    let below_four = store
        .load(&key, Which::LatestBelow(Some(Step::new(4))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(below_four.checkpoint.step, Step::new(1));
    assert_eq!(texts(&below_four.checkpoint.messages), ["hi", "there"]);
    below_four.checkpoint.verify(&below_four.tools).unwrap();
    let below_nine = store
        .load(&key, Which::LatestBelow(Some(Step::new(9))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(below_nine.checkpoint.step, Step::new(4));
    for which in [
        Which::LatestBelow(Some(Step::new(1))),
        Which::At(Step::new(2)),
        Which::At(Step::new(7)),
    ] {
        assert!(
            store.load(&key, which).await.unwrap().is_none(),
            "{which:?}"
        );
    }
}

pub async fn quarantine_hides_a_checkpoint_and_keeps_its_first_reason(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    store.save(&checkpoint(&key, 1, 0, &[])).await.unwrap();
    store.save(&checkpoint(&key, 2, 0, &[])).await.unwrap();
    // Warms a cache in front of the store, if any: quarantine must not leave it serving step 2.
    store.load(&key, Which::LatestBelow(None)).await.unwrap();
    store.quarantine(&key, Step::new(2), "first").await.unwrap();
    store
        .quarantine(&key, Step::new(2), "second")
        .await
        .unwrap();
    // Quarantining a step that holds nothing changes nothing.
    store
        .quarantine(&key, Step::new(9), "nothing")
        .await
        .unwrap();

    let latest = load_latest(&*store, &key).await;
    assert_eq!(latest.checkpoint.step, Step::new(1));
    let at = load_at(&*store, &key, 2).await;
    assert_eq!(at.checkpoint.quarantine.unwrap().reason, "first");
    let listed = store
        .list(&key, &ListQuery::ascending(None, 10))
        .await
        .unwrap();
    assert_eq!(listed[0].quarantine, None);
    assert_eq!(listed[1].quarantine.as_ref().unwrap().reason, "first");
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1, 2]));
}

pub async fn a_damaged_checkpoint_reads_back_and_fails_verification(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, 0, &["a", "b"]))
        .await
        .unwrap();
    let other = run("default", "run-2");
    store
        .save(&checkpoint(&other, 1, 0, &["a", "b"]))
        .await
        .unwrap();
    backend.damage_state(&key, Step::new(1)).await;
    // The store does not verify: it hands the damage over for the engine to judge.
    for which in [Which::LatestBelow(None), Which::At(Step::new(1))] {
        let loaded = store.load(&key, which).await.unwrap().unwrap();
        assert!(
            loaded.checkpoint.verify(&loaded.tools).is_err(),
            "{which:?}"
        );
    }
    let untouched = load_at(&*store, &other, 1).await;
    untouched.checkpoint.verify(&untouched.tools).unwrap();
}

pub async fn list_pages_by_step_with_summaries(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    assert!(
        store
            .list(&key, &ListQuery::ascending(None, 10))
            .await
            .unwrap()
            .is_empty()
    );
    let mut saved = Vec::new();
    for (step, offset, texts) in [(1, 0, &["a"][..]), (2, 1, &[]), (5, 1, &["b", "c"])] {
        saved.push(
            store
                .save(&checkpoint(&key, step, offset, texts))
                .await
                .unwrap(),
        );
    }
    let page = store
        .list(&key, &ListQuery::ascending(None, 2))
        .await
        .unwrap();
    assert_eq!(
        page.iter().map(|s| s.step).collect::<Vec<_>>(),
        steps(&[1, 2])
    );
    assert_eq!(page[0].size_bytes, b"{\"step\":1}".len() as u64);
    assert_eq!(page[0].message_count, 1);
    assert_eq!(page[0].checksum, saved[0].checksum);
    assert_eq!(page[0].created_at, saved[0].created_at);
    assert_eq!((page[0].epoch.get(), page[0].quarantine.clone()), (0, None));
    let rest = store
        .list(&key, &ListQuery::ascending(Some(Step::new(2)), 2))
        .await
        .unwrap();
    assert_eq!(rest.iter().map(|s| s.step).collect::<Vec<_>>(), steps(&[5]));
    assert_eq!(rest[0].message_count, 3);
    assert!(
        store
            .list(&key, &ListQuery::ascending(Some(Step::new(5)), 2))
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn steps_run_exists_and_delete_run_agree(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "run-1");
    assert!(!store.run_exists(&key).await.unwrap());
    assert!(store.steps(&key).await.unwrap().is_empty());
    for (offset, step) in [1, 2, 5].into_iter().enumerate() {
        store
            .save(&checkpoint(&key, step, offset as u64, &["m"]))
            .await
            .unwrap();
    }
    store
        .record_tool_result(&tool(&key, "c1", "x"))
        .await
        .unwrap();
    assert!(store.run_exists(&key).await.unwrap());
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1, 2, 5]));
    assert!(!store.run_exists(&run("default", "nope")).await.unwrap());

    assert_eq!(store.delete_run(&key).await.unwrap(), 3);
    assert!(!store.run_exists(&key).await.unwrap());
    assert!(store.steps(&key).await.unwrap().is_empty());
    assert!(store.tools(&key).await.unwrap().is_empty());
    assert!(
        store
            .load(&key, Which::LatestBelow(None))
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.latest_head(&key).await.unwrap().is_none());
    let error = store.delete_run(&key).await.unwrap_err();
    assert!(
        matches!(error, Error::NotFound(Missing::Run { .. })),
        "{error:?}"
    );

    // Nothing of the old run is left: the message log and the journal start again.
    starts_afresh(&*store, &key, "fresh").await;
    store.ping().await.unwrap();
}

pub async fn latest_head_names_the_latest_valid_checkpoint_and_the_journal(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let key = run("default", "run-1");
    assert!(store.latest_head(&key).await.unwrap().is_none());
    // A resumed run exists before it has any checkpoint.
    store.begin_resume(&key).await.unwrap();
    let head = store.latest_head(&key).await.unwrap().unwrap();
    assert_eq!((head.checkpoint, head.tools), (None, ToolChain::EMPTY));

    let mut first = checkpoint(&key, 1, 0, &["a"]);
    first.epoch = Epoch::new(1);
    let saved_first = store.save(&first).await.unwrap();
    let mut result = tool(&key, "c1", "x");
    result.epoch = Epoch::new(1);
    let (record, _) = store.record_tool_result(&result).await.unwrap();
    let mut second = checkpoint(&key, 2, 1, &["b"]);
    second.epoch = Epoch::new(1);
    let saved = store.save(&second).await.unwrap();

    let head = store.latest_head(&key).await.unwrap().unwrap();
    let latest = head.checkpoint.unwrap();
    assert_eq!((latest.step, latest.epoch.get()), (Step::new(2), 1));
    assert_eq!((&latest.id, latest.checksum), (&saved.id, saved.checksum));
    assert_eq!((head.tools.len, head.tools.head), (1, record.chain));

    store
        .quarantine(&key, Step::new(2), "damaged")
        .await
        .unwrap();
    let head = store.latest_head(&key).await.unwrap().unwrap();
    let latest = head.checkpoint.unwrap();
    assert_eq!((latest.step, &latest.id), (Step::new(1), &saved_first.id));
    assert_eq!(latest.checksum, saved_first.checksum);
    // What the head names is exactly what a load of the latest returns.
    let loaded = load_latest(&*store, &key).await;
    assert_eq!(loaded.checkpoint.id, latest.id);
    assert_eq!(texts(&loaded.checkpoint.messages), ["a"]);
}

pub async fn two_tenants_with_the_same_run_id_never_see_each_others_data(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let a = run("tenant-a", "shared");
    let b = run("tenant-b", "shared");
    store
        .save(&checkpoint(&a, 1, 0, &["from a"]))
        .await
        .unwrap();
    store
        .record_tool_result(&tool(&a, "c1", "a's"))
        .await
        .unwrap();

    assert!(!store.run_exists(&b).await.unwrap());
    for which in [Which::LatestBelow(None), Which::At(Step::new(1))] {
        assert!(store.load(&b, which).await.unwrap().is_none(), "{which:?}");
    }
    assert!(store.tools(&b).await.unwrap().is_empty());
    assert!(store.steps(&b).await.unwrap().is_empty());
    assert!(
        store
            .list(&b, &ListQuery::ascending(None, 10))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.latest_head(&b).await.unwrap().is_none());
    assert!(matches!(
        store.delete_run(&b).await,
        Err(Error::NotFound(Missing::Run { .. }))
    ));

    // B's own history starts from scratch: offset 0, its own call ids, its own epochs.
    let record = starts_afresh(&*store, &b, "from b").await;
    assert_eq!(store.begin_resume(&b).await.unwrap(), Epoch::new(1));
    let b_loaded = load_latest(&*store, &b).await;
    assert_eq!(texts(&b_loaded.checkpoint.messages), ["from b"]);
    assert_eq!(b_loaded.tools, vec![record]);
    let a_loaded = load_at(&*store, &a, 1).await;
    assert_eq!(texts(&a_loaded.checkpoint.messages), ["from a"]);
    assert_eq!(a_loaded.tools.len(), 1);
    assert_eq!(a_loaded.tools[0].output, b"a's");

    assert_eq!(store.delete_run(&b).await.unwrap(), 1);
    assert!(store.run_exists(&a).await.unwrap());
    assert_eq!(store.steps(&a).await.unwrap(), steps(&[1]));
    // A's epoch never moved with B's resume.
    assert_eq!(store.begin_resume(&a).await.unwrap(), Epoch::new(1));
}
