//! The testkit's Postgres schema per test, with the store opened on it.
//!
//! Tests using it run on a multi-threaded runtime, so connection tasks keep running while a
//! schema's Drop blocks a thread: on one thread, a connection still holding a lock (say, a
//! dropped pool whose connection tasks have not been polled yet) would make DROP SCHEMA wait.

use checkpointd_testkit::PgSchema;

use crate::store::{PostgresStore, StoreOptions};

pub(crate) use checkpointd_testkit::connect_or_panic as raw_client;

/// A schema created for one test, dropped when the test ends (even by panic).
pub(crate) struct TestSchema(PgSchema);

impl TestSchema {
    pub(crate) async fn create() -> Self {
        Self(PgSchema::create().await)
    }

    pub(crate) fn url(&self) -> String {
        self.0.url()
    }

    /// A store connected to this schema, migrated on connect.
    pub(crate) async fn store(&self) -> PostgresStore {
        PostgresStore::connect(&self.url(), &StoreOptions { pool_size: 4 })
            .await
            .unwrap_or_else(|error| panic!("connect to {}: {error}", self.url()))
    }

    /// Runs statements inside the schema, bypassing the store.
    pub(crate) async fn sql(&self, statement: &str) {
        self.0.execute(statement).await;
    }
}
