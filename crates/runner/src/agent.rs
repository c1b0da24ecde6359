//! The agent contract: one step at a time, with typed errors the runner can classify.

use async_trait::async_trait;

pub use crate::agent_error::AgentError;
use crate::context::StepContext;

/// What a step ended with.
#[derive(Debug)]
pub enum StepOutcome {
    /// Run the next step.
    Continue,
    /// The agent is done; the bytes become the task's result.
    Finished(Vec<u8>),
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
