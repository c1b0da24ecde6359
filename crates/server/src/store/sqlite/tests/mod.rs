//! What only the SQLite store shows, against a temporary database file: what survives a
//! reopen and what happens when rows are damaged behind its back. The checkpoint-store
//! behaviours every backend shares run in [`crate::store::tests`]. This file holds the fixtures.

mod file;

use tempfile::TempDir;

use super::SqliteStore;
use crate::domain::{Message, NewCheckpoint, RunKey, Step};
use crate::store::CheckpointStore;
use crate::store::tests::{load_at, message, run, tool};

pub(crate) struct Db {
    dir: TempDir,
}

impl Db {
    pub(crate) fn new() -> Self {
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

    pub(crate) async fn open(&self) -> SqliteStore {
        SqliteStore::open(&self.path()).await.expect("open")
    }

    /// A raw connection for tampering, as an operator or a bad disk would.
    pub(crate) fn raw(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path()).expect("raw connection")
    }
}

/// The suite's Save with messages of the test's choosing.
pub(crate) fn checkpoint(
    run: &RunKey,
    step: u64,
    offset: u64,
    messages: Vec<Message>,
) -> NewCheckpoint {
    NewCheckpoint {
        messages,
        ..crate::store::tests::checkpoint(run, step, offset, &[])
    }
}
