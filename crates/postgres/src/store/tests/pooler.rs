//! Behind PgBouncer: `prepared` through a transaction-mode pooler refuses to start with the
//! setting to change, a session-mode pooler is accepted, and a prepared statement lost on a
//! later transaction maps to `Unavailable`, not `Internal`. Fails, never skips, without
//! `TEST_PGBOUNCER_TRANSACTION_URL` / `TEST_PGBOUNCER_SESSION_URL`.

use checkpointd_core::error::Error;
use checkpointd_storage::store::{PostgresStatements, StoreOptions};
use checkpointd_testkit::PooledDatabase;

use crate::PostgresStore;

fn prepared() -> StoreOptions {
    StoreOptions {
        pool_size: 4,
        statements: PostgresStatements::Prepared,
        listen_url: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_behind_a_transaction_pooler_refuse_to_start_naming_the_setting() {
    let database = PooledDatabase::create().await;
    let Err(error) = PostgresStore::connect(&database.transaction_url(), &prepared()).await else {
        panic!("a prepared-statement store started behind a transaction-mode pooler");
    };
    let Error::InvalidArgument(message) = &error else {
        panic!("{error:?}");
    };
    assert!(message.contains("transaction-mode pooler"), "{message}");
    assert!(
        message.contains("--postgres-statements unnamed"),
        "{message}"
    );
    assert!(
        message.contains("CHECKPOINTD_POSTGRES_STATEMENTS"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_through_a_session_pooler_start() {
    let database = PooledDatabase::create().await;
    PostgresStore::connect(&database.session_url(), &prepared())
        .await
        .unwrap_or_else(|error| panic!("session-mode pooler refused: {error}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prepared_statement_lost_between_transactions_is_unavailable_not_internal() {
    let database = PooledDatabase::create().await;
    let (client, connection) =
        tokio_postgres::connect(&database.transaction_url(), tokio_postgres::NoTls)
            .await
            .expect("connect through the transaction pooler");
    tokio::spawn(connection);
    // Another client holds a transaction open, so the pooler must serve the execute below
    // from a different server connection than the one the statement was prepared on.
    let (other, other_connection) =
        tokio_postgres::connect(&database.transaction_url(), tokio_postgres::NoTls)
            .await
            .expect("connect through the transaction pooler");
    tokio::spawn(other_connection);
    let statement = client.prepare("SELECT 1").await.expect("prepare");
    other
        .batch_execute("BEGIN; SELECT 1")
        .await
        .expect("pin a server connection");
    let lost = client
        .query(&statement, &[])
        .await
        .expect_err("the statement survived on another server connection");
    assert_eq!(lost.code().map(|code| code.code()), Some("26000"), "{lost}");
    let error = crate::error::db(lost);
    assert!(matches!(error, Error::Unavailable { .. }), "{error:?}");
}
