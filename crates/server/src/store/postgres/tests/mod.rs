//! What only the Postgres store shows, each test in a schema of its own (they fail loudly
//! without Postgres): migrations, group commit, several instances on one database, SQLSTATE
//! mapping and rows damaged in SQL. The checkpoint-store behaviours every backend shares run
//! in [`crate::store::tests`]. This file holds the fixtures.

mod batches;
mod instances;
mod lifecycle;

use crate::domain::{NewCheckpoint, RunKey};
pub(crate) use crate::store::tests::{
    TestSchema, load_at, load_latest, raw_client, run, texts, tool,
};

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
        ..crate::store::tests::checkpoint(run, step, offset, messages)
    }
}
