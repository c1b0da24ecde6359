//! A Postgres schema of its own for each test, dropped when the test ends; tests fail loudly
//! when Postgres is not there.
//!
//! Tests using it run on a multi-threaded runtime, so connection tasks keep running while a
//! schema's Drop blocks a thread: on one thread, a connection still holding a lock (say, a
//! dropped pool whose connection tasks have not been polled yet) would make DROP SCHEMA wait.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio_postgres::NoTls;

use crate::store::{PostgresStore, StoreOptions};

pub(crate) fn database_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

pub(crate) async fn raw_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|error| {
            panic!("these tests need Postgres at {url} (set TEST_DATABASE_URL): {error}")
        });
    tokio::spawn(connection);
    client
}

/// A schema created for one test, dropped when the test ends (even by panic).
pub(crate) struct TestSchema {
    name: String,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl TestSchema {
    pub(crate) async fn create() -> Self {
        let name = format!(
            "cpd_unit_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        raw_client(&database_url())
            .await
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
            ))
            .await
            .expect("create test schema");
        Self { name }
    }

    pub(crate) fn url(&self) -> String {
        let base = database_url();
        let separator = if base.contains('?') { '&' } else { '?' };
        format!("{base}{separator}options=-csearch_path%3D{}", self.name)
    }

    pub(crate) async fn store(&self) -> PostgresStore {
        PostgresStore::connect(&self.url(), &StoreOptions { pool_size: 4 })
            .await
            .unwrap_or_else(|error| panic!("connect to {}: {error}", self.url()))
    }

    pub(crate) async fn sql(&self, statement: &str) {
        raw_client(&self.url())
            .await
            .batch_execute(statement)
            .await
            .unwrap_or_else(|error| panic!("{statement}: {error}"));
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        let name = self.name.clone();
        // A private runtime on a plain thread works whether or not a runtime is running here.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                if let Ok((client, connection)) =
                    tokio_postgres::connect(&database_url(), NoTls).await
                {
                    tokio::spawn(connection);
                    let _ = client
                        // Bounded, so a leftover lock can leak a schema but never hang a test.
                        .batch_execute(&format!(
                            "SET lock_timeout = '10s'; DROP SCHEMA IF EXISTS {name} CASCADE"
                        ))
                        .await;
                }
            });
        })
        .join();
    }
}
