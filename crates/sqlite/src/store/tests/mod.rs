//! What only the SQLite store shows, against a temporary database file: what survives a
//! reopen and what happens when rows are damaged behind its back. The checkpoint-store
//! behaviours every backend shares run in `suite`; the fixtures are in [`crate::testing`].

mod file;
mod suite;

pub(crate) use crate::testing::{Db, checkpoint};

use checkpointd_core::domain::Step;
use checkpointd_storage::store::CheckpointStore;
use checkpointd_storage::store::tests::{load_at, message, run, tool};
