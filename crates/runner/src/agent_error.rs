//! Why a step failed: the error agents return and the runner classifies. Its own module so
//! the step context, effects and session can name it without importing the agent contract.

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
    /// The step needs a human decision first; raised by
    /// [`StepContext::request_approval`](crate::context::StepContext::request_approval).
    #[error("approval required for {action}")]
    ApprovalRequired { action: String, details: Vec<u8> },
    /// A checkpointd call failed.
    #[error("checkpointd: {0}")]
    Rpc(#[from] tonic::Status),
}
