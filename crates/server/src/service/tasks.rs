//! The task service: the queue with the server's defaults (retry policy, lease, whether a
//! decision resumes its task), and the approval pins that keep a waiting task's checkpoint
//! from being pruned.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use checkpointd_core::domain::{PageSize, RunId, RunKey, Tenant};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::retention::approval_pin;
use checkpointd_protocol::{ClaimBatch, MAX_CLAIM_BATCH};
use checkpointd_storage::queue::{
    NewTask, RetryPolicy, Task, TaskId, TaskQueue, TaskState, Transition, WaitingPage, WaitingQuery,
};
use checkpointd_storage::store::RetentionStore;

/// The fields of a retry policy a caller set; the rest come from the server's defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RetryOverrides {
    pub initial_delay: Option<Duration>,
    pub multiplier: Option<f64>,
    pub max_delay: Option<Duration>,
    pub jitter: Option<f64>,
    pub max_attempts: Option<u32>,
}

impl RetryOverrides {
    /// The overrides on top of `defaults`, refused when the result is not a usable policy.
    pub fn over(self, defaults: &RetryPolicy) -> Result<RetryPolicy> {
        let policy = RetryPolicy {
            initial_delay: self.initial_delay.unwrap_or(defaults.initial_delay),
            multiplier: self.multiplier.unwrap_or(defaults.multiplier),
            max_delay: self.max_delay.unwrap_or(defaults.max_delay),
            jitter: self.jitter.unwrap_or(defaults.jitter),
            max_attempts: self.max_attempts.unwrap_or(defaults.max_attempts),
        };
        policy.validate()?;
        Ok(policy)
    }
}

/// An Enqueue as asked: no retry policy means the server's.
#[derive(Clone, Debug)]
pub struct EnqueueTask {
    pub run_id: RunId,
    pub input: Vec<u8>,
    pub idempotency_key: Option<String>,
    pub retry_policy: Option<RetryOverrides>,
    /// Whether a decision makes the task claimable at once; `None` means the server's.
    pub auto_resume_hitl: Option<bool>,
}

/// Everything the TaskService RPCs do, independent of gRPC.
#[derive(Clone)]
pub struct TaskService {
    queue: Arc<dyn TaskQueue>,
    retry_defaults: RetryPolicy,
    /// The lease of claims that name none: how long before an unheard-of worker's task is
    /// stale and may be reclaimed.
    stale_threshold: Duration,
    /// Where approval waits pin their run's latest checkpoint; `None` pins nothing.
    pins: Option<Arc<dyn RetentionStore>>,
    /// Whether tasks enqueued without a say are claimable right after a decision, or stay
    /// parked until an operator resumes them.
    auto_resume_hitl: bool,
}

impl TaskService {
    pub fn new(
        queue: Arc<dyn TaskQueue>,
        retry_defaults: RetryPolicy,
        stale_threshold: Duration,
    ) -> Self {
        Self {
            queue,
            retry_defaults,
            stale_threshold,
            pins: None,
            auto_resume_hitl: true,
        }
    }

    /// Whether tasks enqueued without a say resume by themselves after an approval decision
    /// (the default) or stay parked for [`Transition::ResumeTask`].
    pub fn with_auto_resume_hitl(mut self, auto_resume_hitl: bool) -> Self {
        self.auto_resume_hitl = auto_resume_hitl;
        self
    }

    /// Pins a run's latest checkpoint in `pins` while one of its tasks waits for approval.
    pub fn with_approval_pins(mut self, pins: Arc<dyn RetentionStore>) -> Self {
        self.pins = Some(pins);
        self
    }

    /// Inserts a task, or returns the one with the same idempotency key (`true` then).
    pub async fn enqueue(&self, tenant: &Tenant, request: EnqueueTask) -> Result<(Task, bool)> {
        let retry_policy = match request.retry_policy {
            None => self.retry_defaults,
            Some(overrides) => overrides.over(&self.retry_defaults)?,
        };
        let task = NewTask {
            run_id: request.run_id,
            input: request.input,
            idempotency_key: request.idempotency_key,
            retry_policy,
            auto_resume_hitl: request.auto_resume_hitl.unwrap_or(self.auto_resume_hitl),
        };
        self.queue.enqueue(tenant, task).await
    }

    /// Leases up to `batch_size` tasks (`0`: one) to `worker` for `lease`, or for the stale
    /// threshold when the worker names no lease.
    pub async fn claim(
        &self,
        tenant: &Tenant,
        worker: &str,
        lease: Option<Duration>,
        batch_size: u32,
        now: SystemTime,
    ) -> Result<Vec<Task>> {
        let batch = ClaimBatch::from_wire(batch_size).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "batch_size {batch_size} is above the limit of {MAX_CLAIM_BATCH}"
            ))
        })?;
        let lease = lease.unwrap_or(self.stale_threshold);
        self.queue.claim(tenant, worker, lease, batch, now).await
    }

    /// Applies one transition. A task entering input_required gets its run's latest
    /// checkpoint pinned; one leaving it (decided and resumed, at once or by
    /// [`Transition::ResumeTask`], or cancelled) gives the pin back. A task parked after its
    /// decision keeps the pin.
    pub async fn update(
        &self,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task> {
        let Some(pins) = &self.pins else {
            return self.queue.update(tenant, id, transition, now).await;
        };
        match transition {
            Transition::RequestApproval { .. } => {
                self.request_approval_pinned(pins, tenant, id, transition, now)
                    .await
            }
            Transition::Decide { .. } | Transition::ResumeTask | Transition::Cancel => {
                self.update_unpinning(pins, tenant, id, transition, now)
                    .await
            }
            _ => self.queue.update(tenant, id, transition, now).await,
        }
    }

    /// One task; `NotFound` when the tenant has no such task.
    pub async fn get(&self, tenant: &Tenant, id: &TaskId) -> Result<Task> {
        self.queue
            .get(tenant, id)
            .await?
            .ok_or_else(|| Error::task_not_found(id))
    }

    /// One page of tasks created after `after`, oldest first, and the id to continue after
    /// when the page came back full.
    pub async fn list(
        &self,
        tenant: &Tenant,
        state: Option<TaskState>,
        after: Option<&TaskId>,
        page_size: PageSize,
    ) -> Result<(Vec<Task>, Option<TaskId>)> {
        let limit = page_size.get();
        let tasks = self.queue.list_tasks(tenant, state, after, limit).await?;
        let next = if tasks.len() == limit {
            tasks.last().map(|task| task.id.clone())
        } else {
            None
        };
        Ok((tasks, next))
    }

    /// One page of the approval inbox: the tenant's tasks waiting for a decision, filtered,
    /// ordered and counted by the queue ([`TaskQueue::list_waiting`]).
    pub async fn list_waiting(&self, tenant: &Tenant, query: &WaitingQuery) -> Result<WaitingPage> {
        self.queue.list_waiting(tenant, query).await
    }

    /// Whether a task enqueued without a say resumes right after its approval decision.
    pub fn auto_resume_hitl_default(&self) -> bool {
        self.auto_resume_hitl
    }

    /// The pin comes first, so no prune can slip in between the task entering input_required
    /// and its checkpoint being pinned; a request the queue refuses after all takes it back.
    async fn request_approval_pinned(
        &self,
        pins: &Arc<dyn RetentionStore>,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task> {
        let Some(task) = self.queue.get(tenant, id).await? else {
            return self.queue.update(tenant, id, transition, now).await;
        };
        // Refuse before changing anything: a request the queue will refuse as read (another
        // attempt holds the task, or it is not running) pins nothing; one already waiting is a
        // retry whose pin exists. Only a race with the queue (a reclaim between this read and
        // the update) still pins and then takes the pin back.
        let may_wait = matches!(transition, Transition::RequestApproval { attempt, .. }
            if task.state == TaskState::Running && task.attempt == attempt);
        if !may_wait {
            return self.queue.update(tenant, id, transition, now).await;
        }
        let run = RunKey::new(tenant.clone(), task.run_id);
        let source = approval_pin(id.as_str());
        pins.pin(&run, None, &source).await?;
        let outcome = self.queue.update(tenant, id, transition, now).await;
        // A task that was already waiting keeps its pin (the refused request was a retry).
        if outcome.is_err() && task.state != TaskState::InputRequired {
            let _ = pins.unpin(&run, None, Some(&source)).await;
        }
        outcome
    }

    async fn update_unpinning(
        &self,
        pins: &Arc<dyn RetentionStore>,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task> {
        let task = self.queue.update(tenant, id, transition, now).await?;
        if task.state != TaskState::InputRequired {
            let run = RunKey::new(tenant.clone(), task.run_id.clone());
            let source = approval_pin(task.id.as_str());
            if let Err(error) = pins.unpin(&run, None, Some(&source)).await {
                // The decision is committed and must be reported as such; the stale pin only
                // keeps a checkpoint longer, and `runs unpin RUN STEP --all-sources` removes it.
                tracing::warn!(task_id = %task.id, run_id = %task.run_id, %error,
                    "approval pin not removed");
            }
        }
        Ok(task)
    }
}

#[cfg(test)]
mod tests;
