//! Tenant isolation, resume and rewind, damaged rows, listing and deletion.

use super::*;

#[tokio::test]
async fn two_tenants_with_the_same_run_id_never_see_each_others_data() {
    let db = Db::new();
    let store = db.open().await;
    let a = run("tenant-a", "shared");
    let b = run("tenant-b", "shared");
    store
        .save(&checkpoint(&a, 1, 0, vec![message("user", "from a")]))
        .await
        .unwrap();
    store
        .record_tool_result(&tool(&a, "c1", "a's"))
        .await
        .unwrap();

    assert!(!store.run_exists(&b).await.unwrap());
    assert!(
        store
            .load(&b, Which::LatestBelow(None))
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.tools(&b).await.unwrap().is_empty());
    assert!(store.steps(&b).await.unwrap().is_empty());
    assert!(store.list(&b, None, 10).await.unwrap().is_empty());
    assert!(matches!(
        store.delete_run(&b).await,
        Err(Error::NotFound(_))
    ));

    // B's own history starts from scratch: offset 0, its own call ids, its own epochs.
    store
        .save(&checkpoint(&b, 1, 0, vec![message("user", "from b")]))
        .await
        .unwrap();
    let (record, existed) = store
        .record_tool_result(&tool(&b, "c1", "b's"))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!(record.output, b"b's");
    assert_eq!(store.begin_resume(&b).await.unwrap(), 1);
    let a_loaded = store
        .load(&a, Which::At(Step::new(1)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        a_loaded.checkpoint.messages,
        vec![message("user", "from a")]
    );
    assert_eq!(a_loaded.tools[0].output, b"a's");

    assert_eq!(store.delete_run(&b).await.unwrap(), 1);
    assert!(store.run_exists(&a).await.unwrap());
    assert_eq!(store.steps(&a).await.unwrap(), vec![Step::new(1)]);
}

#[tokio::test]
async fn resume_rewinds_the_log_and_a_newer_epoch_may_rewrite_a_step() {
    let db = Db::new();
    let engine = Engine::new(Arc::new(db.open().await));
    let store = engine.store();
    let run = run("default", "run-1");
    store
        .save(&checkpoint(&run, 1, 0, vec![message("user", "a")]))
        .await
        .unwrap();
    store
        .save(&checkpoint(&run, 2, 1, vec![message("assistant", "b")]))
        .await
        .unwrap();
    // Damage step 2's state: resume must skip it, quarantine it and rewind to step 1's log.
    db.raw()
        .execute("UPDATE checkpoints SET state = X'00' WHERE step = 2", [])
        .unwrap();
    let resumed = engine.resume(&run).await.unwrap();
    assert_eq!(resumed.epoch, 1);
    assert_eq!(resumed.checkpoint.unwrap().step, Step::new(1));
    assert_eq!(resumed.skipped_steps, vec![Step::new(2)]);

    let at_two = store
        .load(&run, Which::At(Step::new(2)))
        .await
        .unwrap()
        .unwrap();
    assert!(at_two.checkpoint.quarantine.is_some());
    let messages: i64 = db
        .raw()
        .query_row("SELECT count(*) FROM messages", [], |row| row.get(0))
        .unwrap();
    assert_eq!(messages, 1);

    // The new owner re-saves step 2 at its epoch, replacing the quarantined one.
    let mut again = checkpoint(&run, 2, 1, vec![message("assistant", "b2")]);
    again.epoch = 1;
    let saved = store.save(&again).await.unwrap();
    let latest = engine.load_latest(&run).await.unwrap();
    assert_eq!(latest.checkpoint.id, saved.id);
    assert_eq!(latest.checkpoint.epoch, 1);
}

#[tokio::test]
async fn damaged_digests_and_metadata_fall_back_instead_of_failing_the_read() {
    let db = Db::new();
    let engine = Engine::new(Arc::new(db.open().await));
    let run = run("default", "run-1");
    for step in 1..=3 {
        engine
            .save(&checkpoint(
                &run,
                step,
                step - 1,
                vec![message("user", "m")],
            ))
            .await
            .unwrap();
    }
    let raw = db.raw();
    raw.execute(
        "UPDATE checkpoints SET checksum = X'abcd' WHERE step = 3",
        [],
    )
    .unwrap();
    raw.execute(
        "UPDATE checkpoints SET metadata = 'garbage' WHERE step = 2",
        [],
    )
    .unwrap();
    let restored = engine.load_latest(&run).await.unwrap();
    assert_eq!(restored.checkpoint.step, Step::new(1));
    assert_eq!(restored.skipped_steps, vec![Step::new(3), Step::new(2)]);
}

#[tokio::test]
async fn list_pages_by_step_and_delete_removes_every_table() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    for step in [1, 2, 5] {
        store
            .save(&checkpoint(&run, step, 0, Vec::new()))
            .await
            .unwrap();
    }
    let page = store.list(&run, None, 2).await.unwrap();
    assert_eq!(
        page.iter().map(|s| s.step.get()).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(page[0].size_bytes, b"{\"step\":1}".len() as u64);
    let rest = store.list(&run, Some(Step::new(2)), 2).await.unwrap();
    assert_eq!(
        rest.iter().map(|s| s.step.get()).collect::<Vec<_>>(),
        vec![5]
    );

    store
        .record_tool_result(&tool(&run, "c1", "x"))
        .await
        .unwrap();
    assert_eq!(store.delete_run(&run).await.unwrap(), 3);
    assert!(!store.run_exists(&run).await.unwrap());
    let raw = db.raw();
    for table in ["runs", "checkpoints", "messages", "tool_results"] {
        let rows: i64 = raw
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(rows, 0, "{table}");
    }
    assert!(matches!(
        store.delete_run(&run).await,
        Err(Error::NotFound(_))
    ));
    store.ping().await.unwrap();
}

#[tokio::test]
async fn rewind_is_fenced_by_epoch() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    assert!(matches!(
        store.rewind(&run, 0, MessageChain::EMPTY).await,
        Err(Error::NotFound(_))
    ));
    store.begin_resume(&run).await.unwrap();
    store.begin_resume(&run).await.unwrap();
    let error = store
        .rewind(&run, 1, MessageChain::EMPTY)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::FailedPrecondition(_)), "{error:?}");
    store.rewind(&run, 2, MessageChain::EMPTY).await.unwrap();
}
