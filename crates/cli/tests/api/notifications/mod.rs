//! Notifications against a real server and a real HTTP receiver: every event signed and
//! delivered, a receiver that is down and comes back, a server killed between the change and
//! the delivery, a slow receiver that never slows an RPC, an HTTPS receiver behind a private
//! CA, who may manage endpoints, and the watch streams.

mod cli;
mod delivery;
mod integrity;
mod management;
mod private_ca;
mod receiver;
mod watch;

use std::path::PathBuf;

use checkpointd::config::ServerSettings;
use checkpointd::proto::notification_service_client::NotificationServiceClient;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ClaimRequest, CreateWebhookEndpointRequest, EnqueueRequest, ListWebhookDeliveriesRequest,
    RequestApprovalRequest, RetryPolicy, Task, WebhookDelivery,
};
use tonic::transport::Channel;

/// A notification key file in a directory of its own, kept as long as the guard.
pub fn key_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("webhook.key");
    std::fs::write(&path, [42u8; 32]).unwrap();
    (dir, path)
}

/// Default settings with webhooks on.
pub fn with_webhooks(path: &std::path::Path) -> ServerSettings {
    ServerSettings {
        webhook_key_file: Some(path.to_owned()),
        ..ServerSettings::default()
    }
}

pub async fn notifications(channel: Channel) -> NotificationServiceClient<Channel> {
    NotificationServiceClient::new(channel)
}

/// A new endpoint for `url`: its id and secret.
pub async fn create_endpoint(
    client: &mut NotificationServiceClient<Channel>,
    url: &str,
) -> (String, String) {
    let created = client
        .create_webhook_endpoint(CreateWebhookEndpointRequest {
            url: url.to_owned(),
            description: "test receiver".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(created.secret.starts_with("whsec_"));
    (created.endpoint.unwrap().id, created.secret)
}

pub async fn deliveries(client: &mut NotificationServiceClient<Channel>) -> Vec<WebhookDelivery> {
    client
        .list_webhook_deliveries(ListWebhookDeliveriesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .deliveries
}

/// Enqueues a task for `run_id` (with `max_attempts`, and `auto_resume_hitl` when given) and
/// claims it: the task as claimed.
pub async fn claimed(
    tasks: &mut TaskServiceClient<Channel>,
    run_id: &str,
    max_attempts: u32,
    auto_resume_hitl: Option<bool>,
) -> Task {
    let enqueued = tasks
        .enqueue(EnqueueRequest {
            run_id: run_id.into(),
            retry_policy: Some(RetryPolicy {
                max_attempts,
                multiplier: 1.0,
                ..RetryPolicy::default()
            }),
            auto_resume_hitl,
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    let claimed = tasks
        .claim(ClaimRequest {
            worker_id: "w".into(),
            batch_size: 1,
            ..ClaimRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task_id, enqueued.task_id);
    claimed[0].clone()
}

/// Parks a claimed task for approval of `action`.
pub async fn park(tasks: &mut TaskServiceClient<Channel>, task: &Task, action: &str) {
    tasks
        .request_approval(RequestApprovalRequest {
            task_id: task.task_id.clone(),
            attempt: task.attempt,
            action: action.into(),
            details: Vec::new(),
        })
        .await
        .unwrap();
}
