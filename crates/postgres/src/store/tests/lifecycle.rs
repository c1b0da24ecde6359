//! Migrations, rows damaged in SQL and an unreachable database.

use std::time::{Duration, Instant};

use super::{TestSchema, checkpoint, load_at, load_latest, raw_client, run, texts};
use crate::store::PostgresStore;
use checkpointd_core::error::Error;
use checkpointd_storage::store::{CheckpointStore, StoreOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_migrating_at_once_both_succeed() {
    let schema = TestSchema::create().await;
    let options = StoreOptions {
        pool_size: 2,
        ..Default::default()
    };
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
    assert_eq!(
        versions,
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        "each migration applied exactly once"
    );
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
    let loaded = load_latest(&store, &key).await;
    assert!(loaded.checkpoint.verify(&loaded.tools).is_err());
    schema
        .sql("DELETE FROM messages WHERE run_id = 'run-2' AND seq = 0")
        .await;
    let loaded = load_at(&store, &other, 1).await;
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
    assert!(matches!(error, Error::Unavailable { .. }), "{error:?}");
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
    let loaded = load_at(&store, &key, 1).await;
    assert!(loaded.checkpoint.verify(&loaded.tools).is_err());
}
