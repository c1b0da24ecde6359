//! Who may manage webhook endpoints: an admin of the tenant, and no one else; and a server
//! without a notification key refuses to make one.

use checkpointd::config::ServerSettings;
use checkpointd::proto::{
    CreateWebhookEndpointRequest, DeleteWebhookEndpointRequest, ListWebhookDeliveriesRequest,
    ListWebhookEndpointsRequest,
};
use checkpointd_core::domain::Role;
use tonic::Code;

use super::{key_file, notifications, with_webhooks};
use crate::auth::{api_key_auth, bearer, make_key};
use crate::support::{Backend, spawn_app, spawn_app_with};

fn create(url: &str) -> CreateWebhookEndpointRequest {
    CreateWebhookEndpointRequest {
        url: url.into(),
        description: String::new(),
    }
}

fn reason(status: &tonic::Status) -> String {
    tonic_types::StatusExt::get_error_details(status)
        .error_info()
        .map(|info| info.reason.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn only_an_admin_manages_endpoints_and_never_another_tenants() {
    let (_dir, key) = key_file();
    let app = spawn_app_with(
        Backend::Sqlite,
        ServerSettings {
            auth: api_key_auth(),
            ..with_webhooks(&key)
        },
    )
    .await;
    let mut client = notifications(app.channel().await).await;
    for role in [Role::Agent, Role::Operator] {
        let (_, token) = make_key(&app, Some("acme"), role).await;
        let refused = client
            .create_webhook_endpoint(bearer(Some(&token), None, create("http://x.test/h")))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied, "{role}");
        let refused = client
            .list_webhook_endpoints(bearer(Some(&token), None, ListWebhookEndpointsRequest {}))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied, "{role}");
        let refused = client
            .list_webhook_deliveries(bearer(
                Some(&token),
                None,
                ListWebhookDeliveriesRequest::default(),
            ))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied, "{role}");
    }
    let (_, acme) = make_key(&app, Some("acme"), Role::Admin).await;
    let (_, other) = make_key(&app, Some("other"), Role::Admin).await;
    let created = client
        .create_webhook_endpoint(bearer(
            Some(&acme),
            None,
            create("https://hooks.acme.test/in"),
        ))
        .await
        .unwrap()
        .into_inner();
    let id = created.endpoint.unwrap().id;
    let reader = client.clone();
    let listed = |token: String| {
        let mut client = reader.clone();
        async move {
            client
                .list_webhook_endpoints(bearer(Some(&token), None, ListWebhookEndpointsRequest {}))
                .await
                .unwrap()
                .into_inner()
                .endpoints
        }
    };
    let mine = listed(acme.clone()).await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].id, id);
    assert_eq!(mine[0].url, "https://hooks.acme.test/in");
    assert!(
        listed(other.clone()).await.is_empty(),
        "another tenant's endpoint is invisible"
    );
    let refused = client
        .delete_webhook_endpoint(bearer(
            Some(&other),
            None,
            DeleteWebhookEndpointRequest { id: id.clone() },
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::NotFound);
    assert_eq!(reason(&refused), "WEBHOOK_ENDPOINT_NOT_FOUND");
    assert_eq!(
        listed(acme.clone()).await.len(),
        1,
        "the refusal deleted nothing"
    );
    client
        .delete_webhook_endpoint(bearer(
            Some(&acme),
            None,
            DeleteWebhookEndpointRequest { id },
        ))
        .await
        .unwrap();
    assert!(listed(acme).await.is_empty());
}

#[tokio::test]
async fn endpoints_need_a_notification_key_and_a_web_url() {
    let app = spawn_app(Backend::Memory).await;
    let mut client = notifications(app.channel().await).await;
    let refused = client
        .create_webhook_endpoint(create("http://127.0.0.1:9/hook"))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("--webhook-key-file"),
        "{}",
        refused.message()
    );

    let (_dir, key) = key_file();
    let app = spawn_app_with(Backend::Memory, with_webhooks(&key)).await;
    let mut client = notifications(app.channel().await).await;
    for bad in ["ftp://host/x", "http://", "not a url", "http://host/\u{7}"] {
        let refused = client
            .create_webhook_endpoint(create(bad))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{bad:?}");
    }
}
