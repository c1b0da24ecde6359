//! Behaviour of the SQLite store against a temporary database file, including what survives a
//! reopen and what happens when rows are damaged behind its back. This file holds the fixtures.

mod queue_schema;
mod recovery;
mod writes;

use std::collections::BTreeMap;
use std::sync::Arc;

use tempfile::TempDir;

use super::SqliteStore;
use crate::domain::{
    CallId, Message, MessageChain, NewCheckpoint, NewToolResult, RunId, RunKey, Step, Tenant,
};
use crate::engine::Engine;
use crate::error::Error;
use crate::store::{CheckpointStore, Which};

struct Db {
    dir: TempDir,
}

impl Db {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// A path under a directory that does not exist yet, so `open` must create it.
    fn path(&self) -> String {
        self.dir
            .path()
            .join("nested/dir/checkpointd.db")
            .display()
            .to_string()
    }

    async fn open(&self) -> SqliteStore {
        SqliteStore::open(&self.path()).await.expect("open")
    }

    /// A raw connection for tampering, as an operator or a bad disk would.
    fn raw(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path()).expect("raw connection")
    }
}

fn run(tenant: &str, run_id: &str) -> RunKey {
    RunKey::new(
        Tenant::parse(tenant).unwrap(),
        RunId::parse(run_id).unwrap(),
    )
}

fn message(role: &str, content: &str) -> Message {
    Message {
        role: role.to_owned(),
        content: content.as_bytes().to_vec(),
    }
}

fn checkpoint(run: &RunKey, step: u64, offset: u64, messages: Vec<Message>) -> NewCheckpoint {
    NewCheckpoint {
        run: run.clone(),
        step: Step::new(step),
        content_type: "application/json".to_owned(),
        state: format!("{{\"step\":{step}}}").into_bytes(),
        messages,
        message_offset: offset,
        metadata: BTreeMap::from([
            ("agent".to_owned(), "planner".to_owned()),
            ("note".to_owned(), format!("step {step}")),
        ]),
        epoch: 0,
        client_checksum: None,
    }
}

fn tool(run: &RunKey, call_id: &str, output: &str) -> NewToolResult {
    NewToolResult {
        run: run.clone(),
        call_id: CallId::parse(call_id).unwrap(),
        tool_name: "search".to_owned(),
        step: Step::new(1),
        output: output.as_bytes().to_vec(),
        is_error: false,
        epoch: 0,
    }
}
