//! Tests against a real Postgres, each in a schema of its own; they fail loudly without one.
//!
//! Every test runs on a multi-threaded runtime, so connection tasks keep running while a
//! schema's Drop blocks a thread: on one thread, a connection still holding a lock (say, a
//! dropped pool whose connection tasks have not been polled yet) would make DROP SCHEMA wait.

mod batches;
mod lifecycle;
mod queue_schema;
mod reads;
mod writes;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_postgres::NoTls;

use super::PostgresStore;
use crate::domain::{CallId, Message, NewCheckpoint, NewToolResult, RunId, RunKey, Step, Tenant};
use crate::store::StoreOptions;

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

    pub(super) async fn sql(&self, statement: &str) {
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

pub(super) fn run(tenant: &str, run_id: &str) -> RunKey {
    RunKey::new(
        Tenant::parse(tenant).unwrap(),
        RunId::parse(run_id).unwrap(),
    )
}

pub(super) fn message(role: &str, content: &str) -> Message {
    Message {
        role: role.to_owned(),
        content: content.as_bytes().to_vec(),
    }
}

pub(super) fn checkpoint(
    run: &RunKey,
    step: u64,
    state: &[u8],
    offset: u64,
    messages: &[&str],
) -> NewCheckpoint {
    NewCheckpoint {
        run: run.clone(),
        step: Step::new(step),
        content_type: "application/json".to_owned(),
        state: state.to_vec(),
        messages: messages.iter().map(|text| message("user", text)).collect(),
        message_offset: offset,
        metadata: BTreeMap::from([("model".to_owned(), "m1".to_owned())]),
        epoch: 0,
        client_checksum: None,
    }
}

pub(super) fn tool(run: &RunKey, call_id: &str, step: u64, output: &[u8]) -> NewToolResult {
    NewToolResult {
        run: run.clone(),
        call_id: CallId::parse(call_id).unwrap(),
        tool_name: "search".to_owned(),
        step: Step::new(step),
        output: output.to_vec(),
        is_error: false,
        epoch: 0,
    }
}

pub(super) fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| String::from_utf8(m.content.clone()).unwrap())
        .collect()
}
