//! The `TaskService` adapter: parse the request, call the queue, convert the answer.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

use super::task_convert::{
    error_class_from_wire, policy_from_wire, positive_duration, state_from_wire, task_to_wire,
};
use super::tenant::tenant_of;
use crate::domain::{RunId, RunKey, Tenant};
use crate::engine::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use crate::error::{Error, Result};
use crate::proto::{self, task_service_server::TaskService};
use crate::queue::{NewTask, RetryPolicy, Task, TaskId, TaskQueue, TaskState, Transition};
use crate::store::CheckpointStore;
use crate::store::retention::approval_pin;

/// Most tasks one Claim may take.
pub const MAX_CLAIM_BATCH: u32 = 100;
/// Longest worker id, idempotency key, action or approver name, in bytes.
const MAX_NAME_BYTES: usize = 256;

/// Serves `checkpoint.v1.TaskService` on top of a [`TaskQueue`].
#[derive(Clone)]
pub struct TaskApi {
    queue: Arc<dyn TaskQueue>,
    defaults: RetryPolicy,
    default_lease: Duration,
    /// Where approval waits pin their run's latest checkpoint; `None` pins nothing.
    pins: Option<Arc<dyn CheckpointStore>>,
}

impl TaskApi {
    pub fn new(
        queue: Arc<dyn TaskQueue>,
        defaults: RetryPolicy,
        default_lease: Duration,
        pins: Option<Arc<dyn CheckpointStore>>,
    ) -> Self {
        Self {
            queue,
            defaults,
            default_lease,
            pins,
        }
    }

    /// RequestApproval, with the run's latest checkpoint pinned while the task waits.
    ///
    /// The pin comes first, so no prune can slip in between the task entering input_required
    /// and its checkpoint being pinned; a request the queue refuses takes its pin back.
    async fn request_approval_pinned(
        &self,
        metadata: &MetadataMap,
        task_id: &str,
        transition: Transition,
    ) -> Result<Task> {
        let (tenant, id) = task_key(metadata, task_id)?;
        let update = |transition| {
            self.queue
                .update(&tenant, &id, transition, SystemTime::now())
        };
        let (Some(pins), Some(task)) = (&self.pins, self.queue.get(&tenant, &id).await?) else {
            return update(transition).await;
        };
        let run = RunKey::new(tenant.clone(), task.run_id);
        let source = approval_pin(id.as_str());
        pins.pin(&run, None, &source).await?;
        let outcome = update(transition).await;
        // A task that was already waiting keeps its pin (the refused request was a retry).
        if outcome.is_err() && task.state != TaskState::InputRequired {
            let _ = pins.unpin(&run, None, Some(&source)).await;
        }
        outcome
    }

    /// A transition that may take a task out of input_required: its approval pin goes with it.
    async fn transition_unpinning(
        &self,
        metadata: &MetadataMap,
        task_id: &str,
        transition: Transition,
    ) -> Result<Task> {
        let task = self.transition(metadata, task_id, transition).await?;
        if let Some(pins) = &self.pins
            && task.state != TaskState::InputRequired
        {
            let run = RunKey::new(tenant_of(metadata)?, task.run_id.clone());
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

    async fn transition(
        &self,
        metadata: &MetadataMap,
        task_id: &str,
        transition: Transition,
    ) -> Result<Task> {
        let (tenant, id) = task_key(metadata, task_id)?;
        self.queue
            .update(&tenant, &id, transition, SystemTime::now())
            .await
    }
}

/// The tenant and id of the task a request names.
fn task_key(metadata: &MetadataMap, task_id: &str) -> Result<(Tenant, TaskId)> {
    Ok((tenant_of(metadata)?, TaskId::parse(task_id)?))
}

fn name(field: &str, raw: &str) -> Result<String> {
    if raw.is_empty() {
        return Err(Error::InvalidArgument(format!("{field} must not be empty")));
    }
    if raw.len() > MAX_NAME_BYTES || raw.chars().any(char::is_control) {
        return Err(Error::InvalidArgument(format!(
            "{field} must be at most {MAX_NAME_BYTES} bytes of printable text"
        )));
    }
    Ok(raw.to_owned())
}

fn tenant(request: &Request<impl Sized>) -> Result<Tenant> {
    tenant_of(request.metadata())
}

macro_rules! reply {
    ($response:ident, $task:expr) => {
        Ok(Response::new(proto::$response {
            task: Some(task_to_wire($task)),
        }))
    };
}

#[tonic::async_trait]
impl TaskService for TaskApi {
    #[tracing::instrument(name = "task.enqueue", skip_all, fields(task.run_id = %request.get_ref().run_id))]
    async fn enqueue(
        &self,
        request: Request<proto::EnqueueRequest>,
    ) -> Result<Response<proto::EnqueueResponse>, Status> {
        let tenant = tenant(&request)?;
        let request = request.into_inner();
        let task = NewTask {
            run_id: RunId::parse(&request.run_id)?,
            input: request.input,
            idempotency_key: match request.idempotency_key.as_str() {
                "" => None,
                key => Some(name("idempotency_key", key)?),
            },
            retry_policy: policy_from_wire(request.retry_policy, &self.defaults)?,
        };
        let (task, already_existed) = self.queue.enqueue(&tenant, task).await?;
        Ok(Response::new(proto::EnqueueResponse {
            task: Some(task_to_wire(task)),
            already_existed,
        }))
    }

    #[tracing::instrument(name = "task.claim", skip_all, fields(task.worker_id = %request.get_ref().worker_id))]
    async fn claim(
        &self,
        request: Request<proto::ClaimRequest>,
    ) -> Result<Response<proto::ClaimResponse>, Status> {
        let tenant = tenant(&request)?;
        let request = request.into_inner();
        let worker = name("worker_id", &request.worker_id)?;
        let lease = match request.lease_duration {
            None => self.default_lease,
            Some(lease) => positive_duration("lease_duration", Some(lease))?,
        };
        let batch = match request.batch_size {
            0 => 1,
            n if n > MAX_CLAIM_BATCH => {
                return Err(Error::InvalidArgument(format!(
                    "batch_size {n} is above the limit of {MAX_CLAIM_BATCH}"
                ))
                .into());
            }
            n => n,
        };
        let tasks = self
            .queue
            .claim(&tenant, &worker, lease, batch as usize, SystemTime::now())
            .await?;
        Ok(Response::new(proto::ClaimResponse {
            tasks: tasks.into_iter().map(task_to_wire).collect(),
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<proto::HeartbeatRequest>,
    ) -> Result<Response<proto::HeartbeatResponse>, Status> {
        let lease = positive_duration("lease_duration", request.get_ref().lease_duration)?;
        let attempt = request.get_ref().attempt;
        let task = self
            .transition(
                request.metadata(),
                &request.get_ref().task_id,
                Transition::Heartbeat { attempt, lease },
            )
            .await?;
        Ok(Response::new(proto::HeartbeatResponse {
            lease_expires_at: task.lease_expires_at.map(super::convert::timestamp),
        }))
    }

    async fn complete(
        &self,
        request: Request<proto::CompleteRequest>,
    ) -> Result<Response<proto::CompleteResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let transition = Transition::Complete {
            attempt: request.attempt,
            result: request.result,
        };
        reply!(
            CompleteResponse,
            self.transition(&metadata, &request.task_id, transition)
                .await?
        )
    }

    async fn fail(
        &self,
        request: Request<proto::FailRequest>,
    ) -> Result<Response<proto::FailResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let transition = Transition::Fail {
            attempt: request.attempt,
            class: error_class_from_wire(request.error_class)?,
            error: request.error,
        };
        reply!(
            FailResponse,
            self.transition(&metadata, &request.task_id, transition)
                .await?
        )
    }

    async fn release(
        &self,
        request: Request<proto::ReleaseRequest>,
    ) -> Result<Response<proto::ReleaseResponse>, Status> {
        let transition = Transition::Release {
            attempt: request.get_ref().attempt,
        };
        reply!(
            ReleaseResponse,
            self.transition(request.metadata(), &request.get_ref().task_id, transition)
                .await?
        )
    }

    async fn request_approval(
        &self,
        request: Request<proto::RequestApprovalRequest>,
    ) -> Result<Response<proto::RequestApprovalResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let transition = Transition::RequestApproval {
            attempt: request.attempt,
            action: name("action", &request.action)?,
            details: request.details,
        };
        reply!(
            RequestApprovalResponse,
            self.request_approval_pinned(&metadata, &request.task_id, transition)
                .await?
        )
    }

    async fn approve(
        &self,
        request: Request<proto::ApproveRequest>,
    ) -> Result<Response<proto::ApproveResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let transition = Transition::Decide {
            approved: true,
            decided_by: name("decided_by", &request.decided_by)?,
            comment: request.comment,
        };
        reply!(
            ApproveResponse,
            self.transition_unpinning(&metadata, &request.task_id, transition)
                .await?
        )
    }

    async fn reject(
        &self,
        request: Request<proto::RejectRequest>,
    ) -> Result<Response<proto::RejectResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let transition = Transition::Decide {
            approved: false,
            decided_by: name("decided_by", &request.decided_by)?,
            comment: request.comment,
        };
        reply!(
            RejectResponse,
            self.transition_unpinning(&metadata, &request.task_id, transition)
                .await?
        )
    }

    async fn get(
        &self,
        request: Request<proto::GetRequest>,
    ) -> Result<Response<proto::GetResponse>, Status> {
        let tenant = tenant(&request)?;
        let id = TaskId::parse(&request.get_ref().task_id)?;
        let task = self
            .queue
            .get(&tenant, &id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("task {id} not found")))?;
        reply!(GetResponse, task)
    }

    async fn list(
        &self,
        request: Request<proto::ListRequest>,
    ) -> Result<Response<proto::ListResponse>, Status> {
        let tenant = tenant(&request)?;
        let request = request.into_inner();
        let state = state_from_wire(request.state)?;
        let limit = match request.page_size as usize {
            0 => DEFAULT_PAGE_SIZE,
            n if n > MAX_PAGE_SIZE => {
                return Err(Error::InvalidArgument(format!(
                    "page_size {n} is above the limit of {MAX_PAGE_SIZE}"
                ))
                .into());
            }
            n => n,
        };
        let after = match request.page_token.as_str() {
            "" => None,
            token => Some(TaskId::parse(token)?),
        };
        let tasks = self
            .queue
            .list_tasks(&tenant, state, after.as_ref(), limit)
            .await?;
        let next_page_token = if tasks.len() == limit {
            tasks
                .last()
                .map(|task| task.id.to_string())
                .unwrap_or_default()
        } else {
            String::new()
        };
        Ok(Response::new(proto::ListResponse {
            tasks: tasks.into_iter().map(task_to_wire).collect(),
            next_page_token,
        }))
    }

    async fn cancel(
        &self,
        request: Request<proto::CancelRequest>,
    ) -> Result<Response<proto::CancelResponse>, Status> {
        reply!(
            CancelResponse,
            self.transition_unpinning(
                request.metadata(),
                &request.get_ref().task_id,
                Transition::Cancel
            )
            .await?
        )
    }

    async fn requeue(
        &self,
        request: Request<proto::RequeueRequest>,
    ) -> Result<Response<proto::RequeueResponse>, Status> {
        reply!(
            RequeueResponse,
            self.transition(
                request.metadata(),
                &request.get_ref().task_id,
                Transition::Requeue
            )
            .await?
        )
    }
}
