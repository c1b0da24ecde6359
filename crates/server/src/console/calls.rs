//! The console's way into the server: the gRPC service implementations themselves, called
//! in-process with the session's [`CallContext`], after the same role check the auth layer
//! makes. A page can therefore read or change exactly what the signed-in role could over gRPC,
//! in the same tenant, through the same validation and error mapping.

use tonic::{Code, Request, Status};

use crate::config::ServerSettings;
use crate::grpc::auth::{CallContext, access, allows};
use crate::grpc::status::to_status;
use crate::grpc::{CheckpointApi, NotificationApi, TaskApi};
use crate::service::{Services, TaskService};
use checkpointd_core::error::Error;

/// The services a console page calls.
#[derive(Clone)]
pub struct Calls {
    pub checkpoints: CheckpointApi,
    /// `None` when the server serves no queue; the task pages then say so.
    pub tasks: Option<TaskApi>,
    /// The same queue's service, for what no RPC offers: the inbox's filtered, counted page
    /// (after the role check of `TaskService/List`, in the session's tenant).
    pub inbox: Option<TaskService>,
    /// The watch streams behind the live pages; `None` when the server keeps no outbox.
    pub notifications: Option<NotificationApi>,
}

impl Calls {
    /// The same adapters the gRPC router serves, over the same services.
    pub fn new(services: Services, settings: &ServerSettings) -> Self {
        let Services {
            engine,
            retention,
            tasks,
            notifications,
        } = services;
        let watch = notifications
            .clone()
            .map(|notifications| NotificationApi::new(notifications, engine.clone()));
        Self {
            // A verification from the integrity page raises `integrity.corrupt` events as one
            // over gRPC does: the store's quarantine writes them, whoever verifies.
            checkpoints: CheckpointApi::new(engine, retention, settings.max_request_bytes)
                .with_answer_limits(settings.answers),
            inbox: tasks.clone(),
            tasks: tasks.map(TaskApi::new),
            notifications: watch,
        }
    }

    /// The task service behind the inbox, or the refusal a server without a queue gives.
    pub fn inbox(&self) -> Result<&TaskService, Status> {
        self.inbox
            .as_ref()
            .ok_or_else(|| Status::unimplemented("this server serves no task queue"))
    }

    /// The task adapter, or the refusal a server without a queue gives.
    pub fn tasks(&self) -> Result<&TaskApi, Status> {
        self.tasks
            .as_ref()
            .ok_or_else(|| Status::unimplemented("this server serves no task queue"))
    }
}

/// `message` as a call to `method` (`Service/Method`, e.g. `TaskService/Approve`) by
/// `context`: refused as the auth layer would refuse it, else carrying the context the
/// services read their tenant and caller from.
pub fn request<T>(context: &CallContext, method: &str, message: T) -> Result<Request<T>, Status> {
    let path = format!("/checkpoint.v1.{method}");
    if context.identity.authenticated && !allows(access(&path), context.identity.role) {
        return Err(to_status(Error::RoleForbidden(format!(
            "the {} role may not make this call",
            context.identity.role
        ))));
    }
    let mut request = Request::new(message);
    request.extensions_mut().insert(context.clone());
    Ok(request)
}

/// The HTTP status a page answers with for a refused call.
pub fn http_status(status: &Status) -> axum::http::StatusCode {
    use axum::http::StatusCode as Http;
    match status.code() {
        Code::NotFound => Http::NOT_FOUND,
        Code::PermissionDenied => Http::FORBIDDEN,
        Code::Unauthenticated => Http::UNAUTHORIZED,
        Code::InvalidArgument | Code::OutOfRange => Http::BAD_REQUEST,
        Code::AlreadyExists | Code::FailedPrecondition | Code::Aborted => Http::CONFLICT,
        Code::ResourceExhausted => Http::TOO_MANY_REQUESTS,
        Code::Unavailable => Http::SERVICE_UNAVAILABLE,
        Code::Unimplemented => Http::NOT_IMPLEMENTED,
        _ => Http::INTERNAL_SERVER_ERROR,
    }
}

/// A signed-in caller of tenant `acme` with `role`, for the console's unit tests.
#[cfg(test)]
pub(crate) fn test_context(role: checkpointd_core::domain::Role) -> CallContext {
    use checkpointd_core::domain::{Identity, Tenant, TenantScope};
    let tenant = Tenant::parse("acme").unwrap();
    CallContext {
        identity: Identity {
            subject: "key:k".into(),
            tenant: TenantScope::One(tenant.clone()),
            role,
            authenticated: true,
        },
        tenant,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::Role;

    fn context(role: Role) -> CallContext {
        test_context(role)
    }

    #[test]
    fn a_call_the_role_table_refuses_is_refused_before_any_service() {
        let refused = request(&context(Role::Agent), "TaskService/Approve", ()).unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied);
        let unknown = request(&context(Role::Admin), "TaskService/Nope", ()).unwrap_err();
        assert_eq!(unknown.code(), Code::PermissionDenied);
    }

    #[test]
    fn an_allowed_call_carries_the_sessions_context() {
        let made = request(&context(Role::Operator), "TaskService/Approve", ()).unwrap();
        let carried = made.extensions().get::<CallContext>().unwrap();
        assert_eq!(carried.tenant.as_str(), "acme");
        assert_eq!(carried.identity.subject, "key:k");
    }
}
