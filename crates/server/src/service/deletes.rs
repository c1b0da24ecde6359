//! DeleteCheckpoints: the engine's rule for deleting chosen checkpoints of a run now. The
//! store does the deleting (see [`checkpointd_storage::store::CheckpointStore::delete_checkpoints`]); this
//! bounds the request, so every backend sees the same, already judged input.

use crate::service::Engine;
use checkpointd_core::domain::{Epoch, RunKey, Step};
use checkpointd_core::error::{Error, Result};
use checkpointd_storage::store::DeletedCheckpoints;

/// The most steps one DeleteCheckpoints may list (documented in checkpoint.proto). The edge
/// refuses more before decoding (`grpc::save_scan`); this check keeps the rule for callers of
/// the engine that do not come through it, with the same answer.
pub const MAX_DELETE_STEPS: usize = checkpointd_protocol::MAX_DELETE_STEPS;

impl Engine {
    /// Deletes the listed checkpoints of `run`, fenced on `epoch` when one is given.
    pub async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints> {
        if steps.len() > MAX_DELETE_STEPS {
            return Err(Error::TooLarge(format!(
                "DeleteCheckpointsRequest.steps may hold at most {MAX_DELETE_STEPS} entries \
                 (a protocol limit); {} listed: send several requests",
                steps.len()
            )));
        }
        self.store.delete_checkpoints(run, epoch, steps).await
    }
}
