//! The answer of a client that does not follow continuations (an older client): its whole
//! history or ANSWER_TOO_LARGE, never one cut short; and that refusal decided from stored
//! sizes before the history is read.

use checkpointd_core::domain::{MessageWindow, RunKey, Step};
use checkpointd_core::error::{Error, Result};
use checkpointd_storage::store::Which;

use super::checkpoints::Engine;

impl Engine {
    /// ANSWER_TOO_LARGE when `window` of the checkpoint `which` names would stop short of its
    /// log's end, decided from stored sizes (no message body is read where the store can tell):
    /// what a load for a client that does not page checks before it reserves or reads anything.
    /// A checkpoint that turns out corrupt is measured all the same: refusing is the safe side,
    /// and a paging client (or Validate) passes over it.
    pub async fn refuse_unpaged_overflow(
        &self,
        run: &RunKey,
        which: Which,
        window: MessageWindow,
    ) -> Result<()> {
        match self.store.window_stops_short(run, which, window).await? {
            Some(step) => Err(answer_too_large(step, window)),
            None => Ok(()),
        }
    }
}

/// The refusal of an answer whose messages from `window.offset` at `step` are over
/// `window.max_bytes`, for a client that would take a history cut short as whole.
pub fn answer_too_large(step: Step, window: MessageWindow) -> Error {
    Error::AnswerTooLarge(format!(
        "the messages of checkpoint {step} from position {} are over {} bytes \
         (--max-unpaged-answer-bytes); declare CLIENT_CAPABILITY_PAGED_MESSAGES and \
         follow `continuation` (a current client package does), or load with a \
         message_offset",
        window.offset, window.max_bytes
    ))
}
