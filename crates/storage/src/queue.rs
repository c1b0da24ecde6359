//! The durable task queue's contract, `TaskQueue`, and its memory backend.
//!
//! The records and the rules of every transition live in `checkpointd_core::queue` (re-exported
//! here); the SQLite and Postgres queues live in their database's crate and share its checkpoint
//! store's handle; the server wraps any of them with spans and latency metrics. One behaviour
//! suite (`tests`) runs against every backend.

/// Every column of the `tasks` table the SQL backends read, in one order, for `SELECT` lists
/// and `RETURNING` clauses; each backend's `task_row::decode` reads them by name.
#[macro_export]
macro_rules! task_columns {
    () => {
        "id, run_id, state, attempt, attempts_used, initial_delay_ms, multiplier, max_delay_ms, \
         jitter, max_attempts, idempotency_key, worker_id, lease_expires_at, next_attempt_at, \
         last_error, last_error_class, approval_action, approval_requested_at, \
         approval_decision, approval_decided_by, approval_decided_at, approval_comment, \
         created_at, updated_at, approval_details, input, result, auto_resume_hitl"
    };
}

mod memory;
#[cfg(any(test, feature = "testsuite"))]
pub mod tests;
mod waiting;

use async_trait::async_trait;

pub use checkpointd_core::queue::{
    Approval, ClaimBatch, ErrorClass, NewTask, RetryPolicy, Task, TaskId, TaskState, Transition,
    rules,
};
pub use memory::MemoryQueue;
pub use waiting::{MAX_ACTION_COUNTS, MAX_WAITING_PAGE, WaitingPage, WaitingQuery, select_waiting};

use checkpointd_core::domain::Tenant;
use checkpointd_core::error::Result;
use std::time::{Duration, SystemTime};

/// A durable queue of agent tasks, scoped by tenant.
///
/// Backends store and select; what each transition does is decided by [`rules`], so every
/// backend behaves the same.
#[async_trait]
pub trait TaskQueue: Send + Sync + 'static {
    /// Inserts a task, or returns the existing one with the same idempotency key (`true`).
    async fn enqueue(&self, tenant: &Tenant, task: NewTask) -> Result<(Task, bool)>;

    /// Atomically leases up to `batch` claimable tasks (see [`rules::claimable`]) to `worker`
    /// in [`rules::claim_order`], applying [`rules::claim`] to each, and returns them as
    /// stored. Two concurrent claims never return the same task. A claim changes nothing
    /// else: stale tasks whose attempts are used up are left to [`TaskQueue::reap_exhausted`].
    async fn claim(
        &self,
        tenant: &Tenant,
        worker: &str,
        lease: Duration,
        batch: ClaimBatch,
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

    /// One page of the tenant's tasks waiting in `input_required` (decided-but-parked ones
    /// included), filtered, ordered and paged as `query` says, with the counts of
    /// [`WaitingPage`]: the approval inbox. Filtering and counting happen in the backend, so
    /// a long queue costs one page, not every task. [`select_waiting`] is the reference.
    async fn list_waiting(&self, tenant: &Tenant, query: &WaitingQuery) -> Result<WaitingPage>;

    /// Moves up to `limit` reapable tasks (see [`rules::reapable`]: running, lease expired at
    /// `now`, last attempt used) of every tenant to `dead` by [`rules::reap`], oldest expiry
    /// first, and returns how many moved. Decided on each row as locked, so a task heartbeated
    /// meanwhile is left alone. The reaper calls this in batches
    /// until a batch comes back short.
    async fn reap_exhausted(&self, now: SystemTime, limit: usize) -> Result<u64>;

    /// How many tasks are in each state, over every tenant: the queue-depth metric. Never
    /// returns tasks, only counts; states without tasks may be absent.
    async fn depth(&self) -> Result<Vec<(TaskState, u64)>>;
}
