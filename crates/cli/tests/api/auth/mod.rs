//! Authentication, roles and tenant binding, against a real server with a real client: API
//! keys (made in the server's database, or by the real `checkpointd keys` command), JWTs minted
//! here (HS256 secret, RSA keys generated at test time and served as a JWKS), the RPC × role
//! table, and the refusal to serve unauthenticated on a non-loopback address.

mod api_keys;
pub(crate) mod jwt;
mod key_flood;
mod key_flood_process;
mod revocation;
mod roles_table;
mod startup;

use std::time::SystemTime;

use checkpointd::config::AuthSettings;
use checkpointd::config::ServerSettings;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ClaimRequest, EnqueueRequest, LoadLatestRequest, RequestApprovalRequest, Task,
};
use checkpointd_core::domain::{ApiKey, NewApiKey, Role, Tenant, TenantScope};
use tonic::{Code, Request, Status};

use crate::support::{Backend, TestApp, requests, spawn_app_with};

/// The server's one answer to every credential that does not verify.
pub const UNAUTHENTICATED_MESSAGE: &str =
    "missing or invalid credential: send `authorization: Bearer <token>`";

/// A server with `auth` over `backend`.
pub async fn spawn_with_auth(backend: Backend, auth: AuthSettings) -> TestApp {
    spawn_app_with(
        backend,
        ServerSettings {
            auth,
            ..ServerSettings::default()
        },
    )
    .await
}

/// API keys only.
pub fn api_key_auth() -> AuthSettings {
    AuthSettings {
        api_keys: true,
        ..AuthSettings::default()
    }
}

/// A key made in the server's own database, as `checkpointd keys create` makes one; its token.
pub async fn make_key(app: &TestApp, tenant: Option<&str>, role: Role) -> (String, String) {
    let fresh = NewApiKey::generate().unwrap();
    let key = ApiKey {
        id: fresh.id.clone(),
        secret_hash: fresh.secret_hash,
        tenant: match tenant {
            Some(name) => TenantScope::One(Tenant::parse(name).unwrap()),
            None => TenantScope::All,
        },
        role,
        name: format!("{role} test key"),
        created_at: SystemTime::now(),
        revoked_at: None,
    };
    app.keys.create_key(&key).await.unwrap();
    (fresh.id, fresh.token)
}

/// `message` sent with `authorization: Bearer <token>`, and `x-tenant-id` when given.
pub fn bearer<T>(token: Option<&str>, tenant: Option<&str>, message: T) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    if let Some(tenant) = tenant {
        request
            .metadata_mut()
            .insert("x-tenant-id", tenant.parse().unwrap());
    }
    request
}

/// Asserts the refusal every bad credential gets: the code, and a message that says nothing
/// about what was wrong.
pub fn assert_unauthenticated(status: &Status) {
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(status.message(), UNAUTHENTICATED_MESSAGE);
}

/// LoadLatest of `run_id` with `token`: Ok(step) or the refusal.
pub async fn latest_step(app: &TestApp, token: Option<&str>, run_id: &str) -> Result<i64, Status> {
    let mut client = app.client().await;
    let request = LoadLatestRequest {
        run_id: run_id.to_owned(),
        ..Default::default()
    };
    let response = client.load_latest(bearer(token, None, request)).await?;
    Ok(response.into_inner().checkpoint.map_or(-1, |c| c.step))
}

/// Saves `step` of `run_id` as `token` in `tenant` (the credential's own when `None`).
pub async fn save_as(
    app: &TestApp,
    token: &str,
    tenant: Option<&str>,
    run_id: &str,
    step: i64,
) -> Result<(), Status> {
    let mut client = app.client().await;
    let request = requests::save(run_id, step, format!("{{\"step\":{step}}}").as_bytes());
    client
        .save(bearer(Some(token), tenant, request))
        .await
        .map(drop)
}

/// A task enqueued, claimed and parked for approval by `agent`; as it then stands.
pub async fn task_awaiting_approval(app: &TestApp, agent: &str, run_id: &str) -> Task {
    let mut tasks: TaskServiceClient<_> = app.tasks().await;
    let enqueue = EnqueueRequest {
        run_id: run_id.to_owned(),
        input: b"{}".to_vec(),
        ..EnqueueRequest::default()
    };
    tasks
        .enqueue(bearer(Some(agent), None, enqueue))
        .await
        .unwrap();
    let claimed = tasks
        .claim(bearer(
            Some(agent),
            None,
            ClaimRequest {
                worker_id: "w1".into(),
                ..ClaimRequest::default()
            },
        ))
        .await
        .unwrap()
        .into_inner()
        .tasks
        .into_iter()
        .next()
        .expect("a task to claim");
    let asked = RequestApprovalRequest {
        task_id: claimed.task_id.clone(),
        attempt: claimed.attempt,
        action: "deploy_production".into(),
        ..RequestApprovalRequest::default()
    };
    tasks
        .request_approval(bearer(Some(agent), None, asked))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}
