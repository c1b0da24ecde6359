//! Paged answers: LoadLatest, LoadAtStep and Resume declare `CLIENT_CAPABILITY_PAGED_MESSAGES`,
//! and a history too long for one answer is fetched page by page and handed back whole, as if
//! the server had sent it in one piece.
//!
//! The first answer carries the checkpoint with the first page of its messages and a
//! `continuation`; each LoadAtStep with that token returns the next page (messages only: the
//! state, metadata and journal came with the first answer) and the token for the one after,
//! empty on the last page. If the checkpoint is rewritten, deleted or rewound between pages
//! (`FAILED_PRECONDITION`, reason `CHECKPOINT_CHANGED`), or a later page fails verification and
//! the server quarantines the step (`DATA_LOSS`), the pages fetched so far belong to an answer
//! that no longer holds: the whole operation starts again from its first call, at most
//! [`RESTARTS`] times, and then the last error is returned.

use std::future::Future;

use async_trait::async_trait;
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::proto::checkpoint_service_client::CheckpointServiceClient as Grpc;
use crate::proto::{
    Checkpoint, ClientCapability, LoadAtStepRequest, LoadAtStepResponse, LoadLatestRequest,
    LoadLatestResponse, ResumeRequest, ResumeResponse,
};
use checkpointd_client::Checkpoints;

/// How often an operation starts again after its checkpoint changed between pages.
pub const RESTARTS: usize = 3;

/// The reason a continuation gets when its checkpoint changed since the first page.
pub const CHECKPOINT_CHANGED: &str = "CHECKPOINT_CHANGED";

/// An answer whose checkpoint's messages may continue on further pages.
pub trait PagedAnswer {
    /// The checkpoint the pages belong to; None when the answer holds none.
    fn checkpoint_mut(&mut self) -> Option<&mut Checkpoint>;
    /// The token for the next page, leaving the answer's field empty (as a whole answer has it).
    fn take_continuation(&mut self) -> Vec<u8>;
}

macro_rules! paged_answer {
    ($($answer:ty),*) => {$(
        impl PagedAnswer for $answer {
            fn checkpoint_mut(&mut self) -> Option<&mut Checkpoint> {
                self.checkpoint.as_mut()
            }

            fn take_continuation(&mut self) -> Vec<u8> {
                std::mem::take(&mut self.continuation)
            }
        }
    )*};
}

paged_answer!(LoadLatestResponse, LoadAtStepResponse, ResumeResponse);

/// The three calls that answer with a checkpoint and may page it: gRPC ([`Checkpoints`]) in
/// production; a test may wrap it to act between pages. (The gRPC client's own methods take
/// `&mut self`, hence the explicit paths below: a method call would find these first.)
#[async_trait]
pub trait LoadCalls: Send + Sync {
    async fn load_latest(&self, request: LoadLatestRequest) -> Result<LoadLatestResponse, Status>;
    async fn load_at_step(&self, request: LoadAtStepRequest) -> Result<LoadAtStepResponse, Status>;
    async fn resume(&self, request: ResumeRequest) -> Result<ResumeResponse, Status>;
}

#[async_trait]
impl LoadCalls for Checkpoints {
    async fn load_latest(&self, request: LoadLatestRequest) -> Result<LoadLatestResponse, Status> {
        Ok(Grpc::load_latest(&mut self.clone(), request)
            .await?
            .into_inner())
    }

    async fn load_at_step(&self, request: LoadAtStepRequest) -> Result<LoadAtStepResponse, Status> {
        Ok(Grpc::load_at_step(&mut self.clone(), request)
            .await?
            .into_inner())
    }

    async fn resume(&self, request: ResumeRequest) -> Result<ResumeResponse, Status> {
        Ok(Grpc::resume(&mut self.clone(), request).await?.into_inner())
    }
}

/// LoadLatest, with every page of the history.
pub async fn load_latest<C: LoadCalls + ?Sized>(
    calls: &C,
    mut request: LoadLatestRequest,
) -> Result<LoadLatestResponse, Status> {
    declare(&mut request.capabilities);
    whole(calls, &request.run_id, || {
        calls.load_latest(request.clone())
    })
    .await
}

/// LoadAtStep by step or label, with every page of the history.
pub async fn load_at_step<C: LoadCalls + ?Sized>(
    calls: &C,
    mut request: LoadAtStepRequest,
) -> Result<LoadAtStepResponse, Status> {
    declare(&mut request.capabilities);
    whole(calls, &request.run_id, || {
        calls.load_at_step(request.clone())
    })
    .await
}

/// Resume, with every page of the restored checkpoint's history. The capabilities the caller
/// declared (calls in doubt, say) are kept. A restart is a new Resume, so the answer's epoch is
/// the newest one handed out.
pub async fn resume<C: LoadCalls + ?Sized>(
    calls: &C,
    mut request: ResumeRequest,
) -> Result<ResumeResponse, Status> {
    declare(&mut request.capabilities);
    whole(calls, &request.run_id, || calls.resume(request.clone())).await
}

/// Adds the paging capability unless it is declared already.
fn declare(capabilities: &mut Vec<i32>) {
    let paged = ClientCapability::PagedMessages as i32;
    if !capabilities.contains(&paged) {
        capabilities.push(paged);
    }
}

/// Runs `first` and follows its continuation to the last page, starting again from `first`
/// when the checkpoint changes between pages.
async fn whole<C, A, F, Fut>(calls: &C, run_id: &str, mut first: F) -> Result<A, Status>
where
    C: LoadCalls + ?Sized,
    A: PagedAnswer,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<A, Status>>,
{
    let mut restarts = 0;
    loop {
        let answer = first().await?;
        match follow(calls, run_id, answer).await {
            Ok(answer) => return Ok(answer),
            Err(status) if restarts < RESTARTS && changed_between_pages(&status) => {
                restarts += 1;
                tracing::debug!(run_id, restarts, status = %status, "checkpoint changed between pages; loading again");
            }
            Err(status) => return Err(status),
        }
    }
}

/// Whether a continuation's failure means the answer began no longer holds, so loading again
/// from the start gives a consistent one.
fn changed_between_pages(status: &Status) -> bool {
    match status.code() {
        Code::DataLoss => true,
        Code::FailedPrecondition => status
            .get_details_error_info()
            .is_some_and(|info| info.reason == CHECKPOINT_CHANGED),
        _ => false,
    }
}

/// Appends every further page's messages to the answer's checkpoint.
async fn follow<C: LoadCalls + ?Sized, A: PagedAnswer>(
    calls: &C,
    run_id: &str,
    mut answer: A,
) -> Result<A, Status> {
    let mut token = answer.take_continuation();
    if token.is_empty() {
        return Ok(answer);
    }
    while !token.is_empty() {
        let Some(checkpoint) = answer.checkpoint_mut() else {
            return Err(Status::internal(
                "the server sent a continuation without a checkpoint",
            ));
        };
        let mut page = calls
            .load_at_step(LoadAtStepRequest {
                run_id: run_id.to_owned(),
                continuation: token,
                capabilities: vec![ClientCapability::PagedMessages as i32],
                ..LoadAtStepRequest::default()
            })
            .await?;
        token = page.take_continuation();
        let part = page
            .checkpoint
            .ok_or_else(|| Status::internal("a continuation page carried no checkpoint"))?;
        append(checkpoint, part)?;
    }
    if let Some(checkpoint) = answer.checkpoint_mut() {
        let held = checkpoint.messages_offset + checkpoint.messages.len() as u64;
        if held != checkpoint.message_count {
            return Err(Status::internal(format!(
                "the pages of step {} ended at message {held} of {}",
                checkpoint.step, checkpoint.message_count
            )));
        }
    }
    Ok(answer)
}

/// Appends one page to the checkpoint its first answer carried, after checking that it is
/// that checkpoint's page and starts where the messages held so far end.
fn append(checkpoint: &mut Checkpoint, page: Checkpoint) -> Result<(), Status> {
    if page.checkpoint_id != checkpoint.checkpoint_id || page.step != checkpoint.step {
        return Err(Status::internal(format!(
            "a page of step {} came back for step {}",
            checkpoint.step, page.step
        )));
    }
    let next = checkpoint.messages_offset + checkpoint.messages.len() as u64;
    if page.messages_offset != next {
        return Err(Status::internal(format!(
            "a page of step {} starts at message {}, not {next}",
            checkpoint.step, page.messages_offset
        )));
    }
    checkpoint.messages.extend(page.messages);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Message;
    use tonic_types::{ErrorDetails, StatusExt};

    fn checkpoint(offset: u64, count: usize) -> Checkpoint {
        Checkpoint {
            checkpoint_id: "c-1".into(),
            step: 4,
            messages_offset: offset,
            message_count: 10,
            messages: vec![Message::default(); count],
            ..Checkpoint::default()
        }
    }

    #[test]
    fn a_page_that_starts_where_the_messages_end_is_appended() {
        let mut first = checkpoint(2, 3);
        append(&mut first, checkpoint(5, 5)).unwrap();
        assert_eq!(first.messages.len(), 8);
        assert_eq!(first.messages_offset, 2);
    }

    #[test]
    fn a_page_with_a_gap_or_of_another_checkpoint_is_refused() {
        let mut first = checkpoint(0, 3);
        assert!(append(&mut first, checkpoint(4, 1)).is_err());
        let mut other = checkpoint(3, 1);
        other.checkpoint_id = "c-2".into();
        assert!(append(&mut first, other).is_err());
        assert_eq!(first.messages.len(), 3);
    }

    #[test]
    fn only_a_changed_checkpoint_or_a_failed_page_starts_again() {
        let changed = Status::with_error_details(
            Code::FailedPrecondition,
            "rewound",
            ErrorDetails::with_error_info(CHECKPOINT_CHANGED, "checkpointd", []),
        );
        let fenced = Status::with_error_details(
            Code::FailedPrecondition,
            "fenced",
            ErrorDetails::with_error_info("STALE_EPOCH", "checkpointd", []),
        );
        assert!(changed_between_pages(&changed));
        assert!(changed_between_pages(&Status::data_loss("page 3")));
        assert!(!changed_between_pages(&fenced));
        assert!(!changed_between_pages(&Status::unavailable("down")));
    }

    #[test]
    fn the_capability_is_declared_once_beside_the_callers_own() {
        let mut capabilities = vec![ClientCapability::InDoubtCalls as i32];
        declare(&mut capabilities);
        declare(&mut capabilities);
        assert_eq!(
            capabilities,
            vec![
                ClientCapability::InDoubtCalls as i32,
                ClientCapability::PagedMessages as i32
            ]
        );
    }
}
