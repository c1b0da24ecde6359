//! The task queue's meaning: task records, the transitions a task can go through, and the rules
//! every queue backend applies to them.

pub mod rules;
mod task;

pub use checkpointd_protocol::ClaimBatch;
pub use task::{Approval, ErrorClass, NewTask, RetryPolicy, Task, TaskId, TaskState, Transition};
