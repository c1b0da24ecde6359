//! The agent contract: one step at a time, with typed errors the runner can classify.

use async_trait::async_trait;

use crate::context::StepContext;

/// What a step ended with.
#[derive(Debug)]
pub enum StepOutcome {
    /// Run the next step.
    Continue,
    /// The agent is done; the bytes become the task's result.
    Finished(Vec<u8>),
}

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Will fail again on retry: no retries.
    #[error("fatal: {0}")]
    Fatal(String),
    /// May succeed on retry.
    #[error("transient: {0}")]
    Transient(String),
    /// Unclassified: the runner's message patterns decide.
    #[error("{0}")]
    Other(String),
    /// The step needs a human decision first; raised by [`StepContext::request_approval`].
    #[error("approval required for {action}")]
    ApprovalRequired { action: String, details: Vec<u8> },
    /// A checkpointd call failed.
    #[error("checkpointd: {0}")]
    Rpc(#[from] tonic::Status),
}

/// An AI agent the runner can drive through crashes.
///
/// A step must be deterministic given the state, the messages and the journalled tool results,
/// so that re-executing it after a rewind makes the same tool calls (and reuses their results).
#[async_trait]
pub trait Agent: Send + Sync + 'static {
    /// The state of a run that starts from scratch, from the task's input.
    fn initial_state(&self, input: &[u8]) -> Result<Vec<u8>, AgentError>;

    /// Executes step `ctx.step()`, reading and replacing `ctx.state`, appending messages and
    /// calling tools through the context.
    async fn step(&self, ctx: &mut StepContext<'_>) -> Result<StepOutcome, AgentError>;

    /// The task's result when `state` is already final, `None` while steps remain.
    ///
    /// A crash after the last step's checkpoint and before the task is completed leaves a run
    /// whose restored state is its end: the runner asks this before stepping, so no step past
    /// the end runs (and no tool of one). The default assumes every restored state has steps
    /// left.
    fn finished(&self, _state: &[u8]) -> Option<Vec<u8>> {
        None
    }
}
