//! The queue behaviour suite, written once and run against every backend: memory, SQLite,
//! Postgres (which must be reachable; see `TEST_DATABASE_URL`) and the server's instrumented wrapper, each from its own crate.
//!
//! Each test is a generic function over a [`TestBackend`]; [`queue_behaviours!`] instantiates
//! all of them per backend. Time is moved by passing `now`, and made to have passed by
//! rewriting stored tasks, never by sleeping. This file holds the fixtures.

pub mod claims;
pub mod inbox;
pub mod parking;
pub mod reaper;
pub mod rules_agree;
pub mod transitions;

use crate::queue::ClaimBatch;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

use super::{
    ErrorClass, MemoryQueue, NewTask, RetryPolicy, Task, TaskId, TaskQueue, TaskState, Transition,
};
use checkpointd_core::domain::{RunId, Tenant};

/// What the suite needs of a backend beyond the [`TaskQueue`] contract.
#[async_trait]
pub trait TestBackend: Send + Sync + Sized + 'static {
    /// A new, empty database with the queue's schema.
    async fn fresh() -> Self;

    /// A handle on this database. For the SQL backends every call opens new connections, as
    /// another process would; the memory backend has only the one queue.
    async fn open(&self) -> Arc<dyn TaskQueue>;

    /// Stores `task` exactly as given, in place of any task with its id and bypassing the
    /// rules, as an operator or a test of time would.
    async fn put(&self, tenant: &Tenant, task: &Task);

    /// A time as the backend keeps it (the SQL backends keep whole microseconds).
    fn stored(time: SystemTime) -> SystemTime;
}

/// The memory queue, shared by every handle.
pub struct MemoryBackend(Arc<MemoryQueue>);

#[async_trait]
impl TestBackend for MemoryBackend {
    async fn fresh() -> Self {
        Self(Arc::new(MemoryQueue::new()))
    }

    async fn open(&self) -> Arc<dyn TaskQueue> {
        self.0.clone()
    }

    async fn put(&self, tenant: &Tenant, task: &Task) {
        self.0.put(tenant, task.clone());
    }

    fn stored(time: SystemTime) -> SystemTime {
        time
    }
}

/// Every behaviour of the suite, one `#[tokio::test]` each, against `$backend`, a
/// [`TestBackend`]; each backend's crate calls it from its own tests.
#[macro_export]
macro_rules! queue_behaviours {
    ($backend:ty) => {
        $crate::queue_behaviours!(@tests $backend:
            claims::enqueue_with_a_known_idempotency_key_returns_the_existing_task,
            claims::concurrent_enqueues_with_one_key_store_one_task,
            claims::claim_takes_due_tasks_only_oldest_due_first,
            claims::claim_takes_at_most_the_batch_and_zero_takes_nothing,
            claims::a_stale_running_task_is_reclaimed_with_the_next_attempt,
            claims::concurrent_claimers_take_every_task_exactly_once,
            claims::two_tenants_never_see_each_others_tasks,
            claims::a_new_handle_sees_the_tasks_their_keys_and_their_leases,
            claims::list_pages_in_creation_order_and_filters_by_state,
            transitions::a_zombie_completion_after_a_reclaim_is_fenced_and_changes_nothing,
            transitions::a_transient_failure_stores_now_plus_the_backoff_and_waits_for_it,
            transitions::exhausted_retries_make_a_dead_letter_that_requeue_revives,
            transitions::a_fatal_failure_is_final_and_refused_transitions_change_nothing,
            transitions::an_unknown_task_is_not_found,
            transitions::release_returns_the_task_at_once_without_charging_an_attempt,
            transitions::an_approval_request_and_decision_round_trip_through_the_database,
            transitions::a_rejection_reads_back_as_a_rejection,
            transitions::completion_clears_the_error_of_an_earlier_attempt,
            parking::a_decided_task_without_auto_resume_stays_parked_until_resumed,
            parking::a_parked_task_refuses_a_second_decision_and_changes_nothing,
            parking::only_a_task_parked_after_a_decision_can_be_resumed,
            reaper::a_stale_task_on_its_final_attempt_is_left_by_claims_and_buried_by_the_reaper,
            reaper::the_reaper_buries_every_tenants_exhausted_tasks_in_batches_and_nothing_else,
            reaper::a_claim_passes_over_exhausted_stale_tasks_to_the_claimable_ones,
            rules_agree::the_claim_and_the_reaper_do_what_the_rules_say,
            inbox::the_inbox_lists_waiting_tasks_filtered_ordered_paged_and_counted,
        );
    };
    (@tests $backend:ty: $($module:ident :: $test:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $test() {
                $crate::queue::tests::$module::$test::<$backend>().await;
            }
        )*
    };
}

pub const LEASE: Duration = Duration::from_secs(30);

/// A moment `secs` after a base far enough ahead that every task enqueued now is due at it.
pub fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(4_000_000_000 + secs)
}

pub fn tenant(name: &str) -> Tenant {
    Tenant::parse(name).unwrap()
}

pub fn policy() -> RetryPolicy {
    RetryPolicy {
        initial_delay: Duration::from_secs(2),
        multiplier: 3.0,
        max_delay: Duration::from_secs(60),
        jitter: 0.0,
        max_attempts: 3,
    }
}

pub fn new_task(run_id: &str, key: Option<&str>) -> NewTask {
    NewTask {
        run_id: RunId::parse(run_id).unwrap(),
        input: format!("{{\"run\":\"{run_id}\"}}").into_bytes(),
        idempotency_key: key.map(str::to_owned),
        retry_policy: policy(),
        auto_resume_hitl: true,
    }
}

pub async fn enqueue(queue: &dyn TaskQueue, tenant: &Tenant, run_id: &str) -> Task {
    queue
        .enqueue(tenant, new_task(run_id, None))
        .await
        .unwrap()
        .0
}

/// `TaskQueue::list_tasks`, unwrapped.
pub async fn list(
    queue: &dyn TaskQueue,
    tenant: &Tenant,
    state: Option<TaskState>,
    after: Option<&TaskId>,
    limit: usize,
) -> Vec<Task> {
    queue.list_tasks(tenant, state, after, limit).await.unwrap()
}

pub fn ids(tasks: &[Task]) -> Vec<TaskId> {
    tasks.iter().map(|task| task.id.clone()).collect()
}

/// Claims exactly one task of the `default` tenant for worker `w`.
pub async fn claim_one(queue: &dyn TaskQueue, now: SystemTime) -> Task {
    let mut claimed = queue
        .claim(&tenant("default"), "w", LEASE, ClaimBatch::up_to(1), now)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "expected one claimable task at {now:?}");
    claimed.remove(0)
}

/// Rewrites a stored task with `change`, as a test of time would.
pub async fn rewrite<B: TestBackend>(
    backend: &B,
    queue: &dyn TaskQueue,
    tenant: &Tenant,
    id: &TaskId,
    change: impl FnOnce(&mut Task),
) {
    let mut task = queue.get(tenant, id).await.unwrap().expect("a stored task");
    change(&mut task);
    backend.put(tenant, &task).await;
}

/// A task with every time as the backend `B` keeps it.
pub fn as_stored<B: TestBackend>(mut task: Task) -> Task {
    task.lease_expires_at = task.lease_expires_at.map(B::stored);
    task.next_attempt_at = B::stored(task.next_attempt_at);
    task.created_at = B::stored(task.created_at);
    task.updated_at = B::stored(task.updated_at);
    if let Some(approval) = &mut task.approval {
        approval.requested_at = B::stored(approval.requested_at);
        approval.decided_at = approval.decided_at.map(B::stored);
    }
    task
}

/// Tasks written through the queue, one per kind of column value the SQL backends convert:
/// what their own tests read back raw.
pub struct ColumnSamples {
    /// Failed transiently at a `now` finer than a microsecond.
    pub failed: Task,
    /// The unrounded due time that failure set.
    pub due: SystemTime,
    pub approved: Task,
    pub rejected: Task,
}

pub async fn write_column_samples(queue: &dyn TaskQueue) -> ColumnSamples {
    let t = tenant("default");
    for n in 0..3 {
        enqueue(queue, &t, &format!("run-{n}")).await;
    }
    let claimed = claim_one(queue, at(0)).await;
    let failed_at = at(5) + Duration::from_nanos(123_456_789);
    let fail = Transition::Fail {
        attempt: claimed.attempt,
        error: "upstream timed out".into(),
        class: ErrorClass::Transient,
    };
    let failed = queue
        .update(&t, &claimed.id, fail, failed_at)
        .await
        .unwrap();
    let mut decided = Vec::new();
    for approved in [true, false] {
        let claimed = claim_one(queue, at(1)).await;
        let request = Transition::RequestApproval {
            attempt: claimed.attempt,
            action: "send_email".into(),
            details: Vec::new(),
        };
        queue.update(&t, &claimed.id, request, at(1)).await.unwrap();
        let decide = Transition::Decide {
            approved,
            decided_by: "alice".into(),
            comment: String::new(),
        };
        decided.push(queue.update(&t, &claimed.id, decide, at(2)).await.unwrap());
    }
    let rejected = decided.pop().unwrap();
    ColumnSamples {
        failed,
        due: failed_at + policy().initial_delay,
        approved: decided.pop().unwrap(),
        rejected,
    }
}

#[cfg(test)]
mod memory {
    queue_behaviours!(super::MemoryBackend);
}
