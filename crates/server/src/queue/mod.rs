//! The durable task queue: the `TaskQueue` contract, its rules, and its backends.

mod memory;
pub mod rules;
mod task;

use async_trait::async_trait;

pub use memory::MemoryQueue;
pub use task::{Approval, ErrorClass, NewTask, RetryPolicy, Task, TaskId, TaskState, Transition};

use crate::domain::Tenant;
use crate::error::Result;
use std::time::{Duration, SystemTime};

/// A durable queue of agent tasks, scoped by tenant.
///
/// Backends store and select; what each transition does is decided by [`rules`], so every
/// backend behaves the same.
#[async_trait]
pub trait TaskQueue: Send + Sync + 'static {
    /// Inserts a task, or returns the existing one with the same idempotency key (`true`).
    async fn enqueue(&self, tenant: &Tenant, task: NewTask) -> Result<(Task, bool)>;

    /// Atomically leases up to `batch` claimable tasks (see [`rules::claimable`]) to `worker`,
    /// applying [`rules::claim`] to each; tasks the claim sends to `dead` are not returned.
    /// Two concurrent claims never return the same task.
    async fn claim(
        &self,
        tenant: &Tenant,
        worker: &str,
        lease: Duration,
        batch: usize,
        now: SystemTime,
    ) -> Result<Vec<Task>>;

    /// Applies [`rules::apply`] to one task under a row lock and stores the result.
    /// `NotFound` for an unknown task; whatever `apply` rejects changes nothing.
    async fn update(
        &self,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task>;

    /// One task.
    async fn get(&self, tenant: &Tenant, id: &TaskId) -> Result<Option<Task>>;

    /// Up to `limit` tasks created after the task `after`, oldest first, optionally in one state.
    async fn list_tasks(
        &self,
        tenant: &Tenant,
        state: Option<TaskState>,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<Task>>;

    /// How many tasks are in each state, over every tenant: the queue-depth metric. Never
    /// returns tasks, only counts; states without tasks may be absent.
    async fn depth(&self) -> Result<Vec<(TaskState, u64)>>;
}
