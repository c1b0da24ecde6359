//! Quarantine, tenant isolation, migrations, tampered rows and an unreachable database.

use std::time::{Duration, Instant};

use super::{TestSchema, checkpoint, raw_client, run, texts, tool};
use crate::domain::Step;
use crate::error::Error;
use crate::store::postgres::PostgresStore;
use crate::store::{CheckpointStore, StoreOptions, Which};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quarantined_checkpoints_are_skipped_and_keep_their_first_reason() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, b"1", 0, &[]))
        .await
        .unwrap();
    store
        .save(&checkpoint(&key, 2, b"2", 0, &[]))
        .await
        .unwrap();
    store.quarantine(&key, Step::new(2), "first").await.unwrap();
    store
        .quarantine(&key, Step::new(2), "second")
        .await
        .unwrap();
    let latest = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.checkpoint.step, Step::new(1));
    let at = store
        .load(&key, Which::At(Step::new(2)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(at.checkpoint.quarantine.unwrap().reason, "first");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_never_see_each_other() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let (a, b) = (run("tenant-a", "run-1"), run("tenant-b", "run-1"));
    store
        .save(&checkpoint(&a, 1, b"a", 0, &["from a"]))
        .await
        .unwrap();
    store
        .record_tool_result(&tool(&a, "c1", 1, b"a"))
        .await
        .unwrap();
    assert!(
        store
            .load(&b, Which::LatestBelow(None))
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.tools(&b).await.unwrap().is_empty());
    assert!(!store.run_exists(&b).await.unwrap());
    store
        .save(&checkpoint(&b, 1, b"b", 0, &["from b"]))
        .await
        .unwrap();
    let loaded = store
        .load(&b, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(texts(&loaded.checkpoint.messages), ["from b"]);
    assert!(loaded.tools.is_empty());
    assert_eq!(store.delete_run(&b).await.unwrap(), 1);
    assert!(matches!(
        store.delete_run(&b).await,
        Err(Error::NotFound(_))
    ));
    assert_eq!(store.steps(&a).await.unwrap(), [Step::new(1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_migrating_at_once_both_succeed() {
    let schema = TestSchema::create().await;
    let options = StoreOptions { pool_size: 2 };
    let url = schema.url();
    let (first, second) = tokio::join!(
        PostgresStore::connect(&url, &options),
        PostgresStore::connect(&url, &options),
    );
    first.unwrap();
    second.unwrap();
    schema.store().await;
    let client = raw_client(&url).await;
    let versions: Vec<i32> = client
        .query(
            "SELECT version FROM checkpointd_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, [1, 2, 3], "each migration applied exactly once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_row_reads_back_as_a_checkpoint_that_fails_verification() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, b"state", 0, &["a", "b"]))
        .await
        .unwrap();
    let other = run("default", "run-2");
    store
        .save(&checkpoint(&other, 1, b"state", 0, &["a", "b"]))
        .await
        .unwrap();
    schema
        .sql(
            "UPDATE checkpoints SET checksum = '\\x00', message_count = -1 \
             WHERE run_id = 'run-1' AND step = 1",
        )
        .await;
    let loaded = store
        .load(&key, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap();
    assert!(loaded.checkpoint.verify(&loaded.tools).is_err());
    schema
        .sql("DELETE FROM messages WHERE run_id = 'run-2' AND seq = 0")
        .await;
    let loaded = store
        .load(&other, Which::At(Step::new(1)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(texts(&loaded.checkpoint.messages), ["b"]);
    assert!(loaded.checkpoint.verify(&loaded.tools).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_fails_fast_with_unavailable_when_postgres_is_unreachable() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let result = PostgresStore::connect(
        &format!("postgres://postgres:secret@127.0.0.1:{port}/test"),
        &StoreOptions::default(),
    )
    .await;
    let Err(error) = result else {
        panic!("connected to nothing");
    };
    assert!(matches!(error, Error::Unavailable(_)), "{error:?}");
    assert!(!error.to_string().contains("secret"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misshapen_metadata_reads_back_as_a_checkpoint_that_fails_verification() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let key = run("default", "run-1");
    store
        .save(&checkpoint(&key, 1, b"s", 0, &[]))
        .await
        .unwrap();
    schema
        .sql("UPDATE checkpoints SET metadata_keys = '{{a},{b}}', metadata_values = '{NULL}'")
        .await;
    let loaded = store
        .load(&key, Which::At(Step::new(1)))
        .await
        .unwrap()
        .unwrap();
    assert!(loaded.checkpoint.verify(&loaded.tools).is_err());
}
