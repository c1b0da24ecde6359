//! A claimed task: the one holder of its lease, and the only way the runner heartbeats,
//! completes, fails, parks or releases it. Every transition is fenced on the attempt it holds.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Code, Status};

use crate::api::RunnerApi;
use crate::classify::ErrorClass;
use crate::proto::{
    self, CompleteRequest, FailRequest, HeartbeatRequest, ReleaseRequest, RequestApprovalRequest,
};
use crate::session::Decision;
use crate::task_end::TaskEnd;

/// A task this worker holds a lease on. The ending transitions take it by value: after one of
/// them the worker holds nothing.
#[derive(Clone)]
pub struct ClaimedTask {
    api: Arc<dyn RunnerApi>,
    task: proto::Task,
    /// The tenant the worker claims for (its calls carry it), for logs.
    tenant: Option<String>,
}

impl std::fmt::Debug for ClaimedTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaimedTask")
            .field("task_id", &self.task.task_id)
            .field("run_id", &self.task.run_id)
            .field("attempt", &self.task.attempt)
            .field("tenant", &self.tenant)
            .finish()
    }
}

impl ClaimedTask {
    pub fn new(api: Arc<dyn RunnerApi>, task: proto::Task, tenant: Option<String>) -> Self {
        Self { api, task, tenant }
    }

    pub fn task_id(&self) -> &str {
        &self.task.task_id
    }

    pub fn run_id(&self) -> &str {
        &self.task.run_id
    }

    /// The claim number: the fencing token of this lease.
    pub fn attempt(&self) -> u64 {
        self.task.attempt
    }

    pub fn input(&self) -> &[u8] {
        &self.task.input
    }

    pub fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    /// The human decision the task carries, once one was made.
    pub fn decision(&self) -> Option<Decision> {
        self.task
            .approval
            .as_ref()
            .filter(|approval| approval.decided)
            .map(|approval| Decision {
                action: approval.action.clone(),
                approved: approval.approved,
                decided_by: approval.decided_by.clone(),
                comment: approval.comment.clone(),
            })
    }

    /// Renews the lease for `lease` from now. `FAILED_PRECONDITION` means another worker owns
    /// the task.
    pub async fn heartbeat(&self, lease: Duration) -> Result<(), Status> {
        self.api
            .heartbeat(HeartbeatRequest {
                task_id: self.task.task_id.clone(),
                attempt: self.task.attempt,
                lease_duration: prost_types::Duration::try_from(lease).ok(),
            })
            .await
    }

    /// The agent finished; `result` becomes the task's output.
    pub async fn complete(self, result: Vec<u8>) -> TaskEnd {
        let request = CompleteRequest {
            task_id: self.task.task_id.clone(),
            attempt: self.task.attempt,
            result,
        };
        let reply = report(|| self.api.complete(request.clone())).await;
        settle(reply, TaskEnd::Completed)
    }

    /// Parks the task in `input_required` until a human decides `action`.
    pub async fn request_approval(self, action: String, details: Vec<u8>) -> TaskEnd {
        let request = RequestApprovalRequest {
            task_id: self.task.task_id.clone(),
            attempt: self.task.attempt,
            action: action.clone(),
            details,
        };
        let reply = report(|| self.api.request_approval(request.clone())).await;
        settle(reply, TaskEnd::AwaitingApproval(action))
    }

    /// Hands the task back with no attempt charged (graceful shutdown).
    pub async fn release(self) -> TaskEnd {
        let request = ReleaseRequest {
            task_id: self.task.task_id.clone(),
            attempt: self.task.attempt,
        };
        let reply = report(|| self.api.release(request.clone())).await;
        settle(reply, TaskEnd::Released)
    }

    /// Reports a failure; the queue retries a transient one and parks a fatal one.
    pub async fn fail(self, class: ErrorClass, error: String) -> TaskEnd {
        let request = FailRequest {
            task_id: self.task.task_id.clone(),
            attempt: self.task.attempt,
            error: error.clone(),
            error_class: class.to_wire() as i32,
        };
        let reply = report(|| self.api.fail(request.clone())).await;
        settle(reply, TaskEnd::Failed(class, error))
    }
}

/// How long an outcome report is retried while the server answers UNAVAILABLE (a database
/// failover, a restarting server): longer than a failover takes, so the task does not wait a
/// whole lease to be reclaimed. A retry past the lease is harmless: the server fences it.
const REPORT_RETRY_FOR: Duration = Duration::from_secs(60);
/// The first pause between retries; it doubles up to [`REPORT_RETRY_MAX_PAUSE`].
const REPORT_RETRY_PAUSE: Duration = Duration::from_millis(100);
const REPORT_RETRY_MAX_PAUSE: Duration = Duration::from_secs(2);

/// Sends an outcome report, again while the server answers UNAVAILABLE, for at most
/// [`REPORT_RETRY_FOR`]. Every transition is fenced on the attempt, so a report that landed
/// before its answer was lost is refused on retry (FAILED_PRECONDITION), never applied twice.
async fn report<F, Fut>(send: F) -> Result<(), Status>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), Status>>,
{
    let give_up = tokio::time::Instant::now() + REPORT_RETRY_FOR;
    let mut pause = REPORT_RETRY_PAUSE;
    loop {
        match send().await {
            Err(status)
                if status.code() == Code::Unavailable
                    && tokio::time::Instant::now() + pause < give_up =>
            {
                tracing::warn!(message = status.message(), retry_in = ?pause, "the server is unavailable; reporting the task outcome again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(REPORT_RETRY_MAX_PAUSE);
            }
            reply => return reply,
        }
    }
}

/// A fenced report means another worker owns the task: that is not this worker's error.
fn settle(reply: Result<(), Status>, end: TaskEnd) -> TaskEnd {
    match reply {
        Ok(()) => end,
        Err(status) if status.code() == Code::FailedPrecondition => TaskEnd::LeaseLost,
        Err(status) => {
            tracing::error!(code = ?status.code(), message = status.message(), "reporting the task outcome failed; the lease will expire and the task will be reclaimed");
            end
        }
    }
}
