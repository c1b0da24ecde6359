//! What only the Postgres store shows, each test in a schema of its own (they fail loudly
//! without Postgres): migrations, group commit, several instances on one database, SQLSTATE
//! mapping, rows damaged in SQL and PgBouncer in front. The checkpoint-store behaviours every backend shares run
//! in [`checkpointd_storage::store::tests`]. This file holds the fixtures.

mod batches;
mod instances;
mod lifecycle;
mod pooler;
mod suite;

pub(crate) use crate::testing::{TestSchema, raw_client};
use checkpointd_core::domain::{NewCheckpoint, RunKey};
pub(crate) use checkpointd_storage::store::tests::{load_at, load_latest, run, texts, tool};

/// The suite's Save with a state of the test's choosing.
pub(crate) fn checkpoint(
    run: &RunKey,
    step: u64,
    state: &[u8],
    offset: u64,
    messages: &[&str],
) -> NewCheckpoint {
    NewCheckpoint {
        state: state.to_vec(),
        ..checkpointd_storage::store::tests::checkpoint(run, step, offset, messages)
    }
}
