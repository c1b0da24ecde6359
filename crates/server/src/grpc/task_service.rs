//! The `TaskService` adapter: parse the request, call the task service, convert the answer.

use crate::grpc::status::to_status;
use std::time::SystemTime;

use tonic::Extensions;
use tonic::{Request, Response, Status};

use super::task_convert::{
    comment_from_wire, error_class_from_wire, error_text_from_wire, positive_duration,
    retry_overrides_from_wire, state_from_wire, task_to_wire,
};
use super::tenant::{identity_of, tenant_of};
use crate::proto;
use crate::service::{EnqueueTask, TaskService};
use checkpointd_core::domain::{Attempt, PageSize, RunId, Tenant};
use checkpointd_core::error::{Error, Result};
use checkpointd_storage::queue::{Task, TaskId, Transition};

/// Longest worker id, idempotency key, action or approver name, in bytes.
const MAX_NAME_BYTES: usize = 256;

/// Serves `checkpoint.v1.TaskService` on top of a [`TaskService`].
#[derive(Clone)]
pub struct TaskApi {
    tasks: TaskService,
}

impl TaskApi {
    pub fn new(tasks: TaskService) -> Self {
        Self { tasks }
    }

    async fn transition(
        &self,
        extensions: &Extensions,
        task_id: &str,
        transition: Transition,
    ) -> Result<Task> {
        let (tenant, id) = task_key(extensions, task_id)?;
        self.tasks
            .update(&tenant, &id, transition, SystemTime::now())
            .await
    }
}

/// The tenant and id of the task a request names.
fn task_key(extensions: &Extensions, task_id: &str) -> Result<(Tenant, TaskId)> {
    Ok((tenant_of(extensions)?, TaskId::parse(task_id)?))
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

/// Who decides an approval, and the comment stored with it. With authentication on, the
/// decider is the credential's identity; the request's free-text `decided_by`, when it names
/// someone else, is kept as a note at the head of the comment. Without it, the caller's
/// `decided_by` is the decider, as before.
fn decision(
    extensions: &Extensions,
    decided_by: &str,
    comment: String,
) -> Result<(String, String)> {
    let comment = comment_from_wire(comment)?;
    let identity = identity_of(extensions)?;
    if !identity.authenticated {
        return Ok((name("decided_by", decided_by)?, comment));
    }
    if decided_by.is_empty() || decided_by == identity.subject {
        return Ok((identity.subject.clone(), comment));
    }
    let note = name("decided_by", decided_by)?;
    let comment = match comment.as_str() {
        "" => format!("[decided_by note: {note}]"),
        text => format!("[decided_by note: {note}] {text}"),
    };
    Ok((identity.subject.clone(), comment_from_wire(comment)?))
}

fn tenant(request: &Request<impl Sized>) -> Result<Tenant> {
    tenant_of(request.extensions())
}

macro_rules! reply {
    ($response:ident, $task:expr) => {
        Ok(Response::new(proto::$response {
            task: Some(task_to_wire($task)),
        }))
    };
}

#[tonic::async_trait]
impl proto::task_service_server::TaskService for TaskApi {
    #[tracing::instrument(name = "task.enqueue", skip_all, fields(task.run_id = %request.get_ref().run_id))]
    async fn enqueue(
        &self,
        request: Request<proto::EnqueueRequest>,
    ) -> Result<Response<proto::EnqueueResponse>, Status> {
        let tenant = tenant(&request).map_err(to_status)?;
        let request = request.into_inner();
        let task = EnqueueTask {
            run_id: RunId::parse(&request.run_id).map_err(to_status)?,
            input: request.input,
            idempotency_key: match request.idempotency_key.as_str() {
                "" => None,
                key => Some(name("idempotency_key", key).map_err(to_status)?),
            },
            retry_policy: retry_overrides_from_wire(request.retry_policy).map_err(to_status)?,
            auto_resume_hitl: request.auto_resume_hitl,
        };
        let (task, already_existed) = self.tasks.enqueue(&tenant, task).await.map_err(to_status)?;
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
        let tenant = tenant(&request).map_err(to_status)?;
        let request = request.into_inner();
        let worker = name("worker_id", &request.worker_id).map_err(to_status)?;
        let lease = request
            .lease_duration
            .map(|lease| positive_duration("lease_duration", Some(lease)))
            .transpose()
            .map_err(to_status)?;
        let tasks = self
            .tasks
            .claim(
                &tenant,
                &worker,
                lease,
                request.batch_size,
                SystemTime::now(),
            )
            .await
            .map_err(to_status)?;
        Ok(Response::new(proto::ClaimResponse {
            tasks: tasks.into_iter().map(task_to_wire).collect(),
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<proto::HeartbeatRequest>,
    ) -> Result<Response<proto::HeartbeatResponse>, Status> {
        let lease = positive_duration("lease_duration", request.get_ref().lease_duration)
            .map_err(to_status)?;
        let attempt = Attempt::from_wire(request.get_ref().attempt);
        let task = self
            .transition(
                request.extensions(),
                &request.get_ref().task_id,
                Transition::Heartbeat { attempt, lease },
            )
            .await
            .map_err(to_status)?;
        Ok(Response::new(proto::HeartbeatResponse {
            lease_expires_at: task.lease_expires_at.map(crate::wire::timestamp),
        }))
    }

    async fn complete(
        &self,
        request: Request<proto::CompleteRequest>,
    ) -> Result<Response<proto::CompleteResponse>, Status> {
        let (_, extensions, request) = request.into_parts();
        let transition = Transition::Complete {
            attempt: Attempt::from_wire(request.attempt),
            result: request.result,
        };
        reply!(
            CompleteResponse,
            self.transition(&extensions, &request.task_id, transition)
                .await
                .map_err(to_status)?
        )
    }

    async fn fail(
        &self,
        request: Request<proto::FailRequest>,
    ) -> Result<Response<proto::FailResponse>, Status> {
        let (_, extensions, request) = request.into_parts();
        let transition = Transition::Fail {
            attempt: Attempt::from_wire(request.attempt),
            class: error_class_from_wire(request.error_class).map_err(to_status)?,
            error: error_text_from_wire(request.error).map_err(to_status)?,
        };
        reply!(
            FailResponse,
            self.transition(&extensions, &request.task_id, transition)
                .await
                .map_err(to_status)?
        )
    }

    async fn release(
        &self,
        request: Request<proto::ReleaseRequest>,
    ) -> Result<Response<proto::ReleaseResponse>, Status> {
        let transition = Transition::Release {
            attempt: Attempt::from_wire(request.get_ref().attempt),
        };
        reply!(
            ReleaseResponse,
            self.transition(request.extensions(), &request.get_ref().task_id, transition)
                .await
                .map_err(to_status)?
        )
    }

    async fn request_approval(
        &self,
        request: Request<proto::RequestApprovalRequest>,
    ) -> Result<Response<proto::RequestApprovalResponse>, Status> {
        let (_, extensions, request) = request.into_parts();
        let transition = Transition::RequestApproval {
            attempt: Attempt::from_wire(request.attempt),
            action: name("action", &request.action).map_err(to_status)?,
            details: request.details,
        };
        reply!(
            RequestApprovalResponse,
            self.transition(&extensions, &request.task_id, transition)
                .await
                .map_err(to_status)?
        )
    }

    async fn approve(
        &self,
        request: Request<proto::ApproveRequest>,
    ) -> Result<Response<proto::ApproveResponse>, Status> {
        let (_, extensions, request) = request.into_parts();
        let (decided_by, comment) =
            decision(&extensions, &request.decided_by, request.comment).map_err(to_status)?;
        let transition = Transition::Decide {
            approved: true,
            decided_by,
            comment,
        };
        reply!(
            ApproveResponse,
            self.transition(&extensions, &request.task_id, transition)
                .await
                .map_err(to_status)?
        )
    }

    async fn reject(
        &self,
        request: Request<proto::RejectRequest>,
    ) -> Result<Response<proto::RejectResponse>, Status> {
        let (_, extensions, request) = request.into_parts();
        let (decided_by, comment) =
            decision(&extensions, &request.decided_by, request.comment).map_err(to_status)?;
        let transition = Transition::Decide {
            approved: false,
            decided_by,
            comment,
        };
        reply!(
            RejectResponse,
            self.transition(&extensions, &request.task_id, transition)
                .await
                .map_err(to_status)?
        )
    }

    async fn resume_task(
        &self,
        request: Request<proto::ResumeTaskRequest>,
    ) -> Result<Response<proto::ResumeTaskResponse>, Status> {
        reply!(
            ResumeTaskResponse,
            self.transition(
                request.extensions(),
                &request.get_ref().task_id,
                Transition::ResumeTask
            )
            .await
            .map_err(to_status)?
        )
    }

    async fn get(
        &self,
        request: Request<proto::GetRequest>,
    ) -> Result<Response<proto::GetResponse>, Status> {
        let tenant = tenant(&request).map_err(to_status)?;
        let id = TaskId::parse(&request.get_ref().task_id).map_err(to_status)?;
        reply!(
            GetResponse,
            self.tasks.get(&tenant, &id).await.map_err(to_status)?
        )
    }

    async fn list(
        &self,
        request: Request<proto::ListRequest>,
    ) -> Result<Response<proto::ListResponse>, Status> {
        let tenant = tenant(&request).map_err(to_status)?;
        let request = request.into_inner();
        let state = state_from_wire(request.state).map_err(to_status)?;
        let page_size = PageSize::parse(request.page_size).map_err(to_status)?;
        let after = match request.page_token.as_str() {
            "" => None,
            token => Some(TaskId::parse(token).map_err(to_status)?),
        };
        let (tasks, next) = self
            .tasks
            .list(&tenant, state, after.as_ref(), page_size)
            .await
            .map_err(to_status)?;
        let next_page_token = next.map(|id| id.to_string()).unwrap_or_default();
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
            self.transition(
                request.extensions(),
                &request.get_ref().task_id,
                Transition::Cancel
            )
            .await
            .map_err(to_status)?
        )
    }

    async fn requeue(
        &self,
        request: Request<proto::RequeueRequest>,
    ) -> Result<Response<proto::RequeueResponse>, Status> {
        reply!(
            RequeueResponse,
            self.transition(
                request.extensions(),
                &request.get_ref().task_id,
                Transition::Requeue
            )
            .await
            .map_err(to_status)?
        )
    }
}
