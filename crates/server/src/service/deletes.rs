//! DeleteCheckpoints: the engine's rule for deleting chosen checkpoints of a run now. The
//! store does the deleting (see [`crate::store::CheckpointStore::delete_checkpoints`]); this
//! bounds the request, so every backend sees the same, already judged input.

use crate::domain::{RunKey, Step};
use crate::error::{Error, Result};
use crate::service::Engine;
use crate::store::DeletedCheckpoints;

/// The most steps one DeleteCheckpoints may list (documented in checkpoint.proto): enough for a
/// framework's prune of a long thread in a few calls, small enough that the one transaction
/// holding the run's lock stays short.
pub const MAX_DELETE_STEPS: usize = 1000;

impl Engine {
    /// Deletes the listed checkpoints of `run`, fenced on `epoch` when one is given.
    pub async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<u64>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints> {
        if steps.len() > MAX_DELETE_STEPS {
            return Err(Error::invalid(
                "steps",
                format!(
                    "{} steps listed; at most {MAX_DELETE_STEPS} per request",
                    steps.len()
                ),
            ));
        }
        self.store.delete_checkpoints(run, epoch, steps).await
    }
}
