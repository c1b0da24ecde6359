//! How an attempt at a task ended: what the recovery loop returns, the claimed task settles
//! with and the events report. Below all three, so none of them imports another for it.

use crate::classify::ErrorClass;

/// How an attempt at a task ended, from the queue's point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskEnd {
    Completed,
    Failed(ErrorClass, String),
    AwaitingApproval(String),
    /// Shutdown: checkpointed and handed back with no attempt charged.
    Released,
    /// Another worker owns the task now; this one stops without writing.
    LeaseLost,
}
