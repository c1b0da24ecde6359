//! A webhook receiver served over HTTPS with a certificate from a private CA: delivered only
//! when the server trusts that CA through `--outbound-ca-file`, as its other outbound calls do.

use checkpointd::config::ServerSettings;
use checkpointd::proto::{DeliveryStatus, WebhookDelivery};
use checkpointd_testkit::{HttpsServer, TestCa};

use super::{claimed, create_endpoint, deliveries, key_file, notifications, park, with_webhooks};
use crate::support::{Backend, TestApp, spawn_app_with, wait_until};

/// Creates an endpoint for `url` on `app` and raises one event for it: the endpoint's secret.
async fn endpoint_with_an_event(app: &TestApp, url: &str, run_id: &str) -> String {
    let mut admin = notifications(app.channel().await).await;
    let (_, secret) = create_endpoint(&mut admin, url).await;
    let mut tasks = app.tasks().await;
    let task = claimed(&mut tasks, run_id, 3, Some(true)).await;
    park(&mut tasks, &task, "deploy").await;
    secret
}

/// The app's one delivery, once `done` holds for it.
async fn settled(app: &TestApp, what: &str, done: fn(&WebhookDelivery) -> bool) -> WebhookDelivery {
    let admin = notifications(app.channel().await).await;
    wait_until(what, || async {
        let listed = deliveries(&mut admin.clone()).await;
        listed.len() == 1 && done(&listed[0])
    })
    .await;
    deliveries(&mut admin.clone()).await.remove(0)
}

#[tokio::test]
async fn an_https_receiver_signed_by_a_private_ca_is_delivered_only_when_outbound_ca_file_trusts_it()
 {
    let ca = TestCa::new("webhook receiver test CA");
    let receiver = HttpsServer::start(&ca.server_cert("receiver", &["127.0.0.1"])).await;
    receiver.set("/hook", 200, "{}");
    let url = format!("{}/hook", receiver.base_url());
    let (_dir, key) = key_file();

    // Without the CA the handshake is refused: the delivery fails and nothing arrives.
    let untrusting = spawn_app_with(Backend::Sqlite, with_webhooks(&key)).await;
    endpoint_with_an_event(&untrusting, &url, "run-untrusted").await;
    let failed = settled(&untrusting, "the delivery failed", |d| d.attempts >= 1).await;
    assert_eq!(failed.status(), DeliveryStatus::Failing, "{failed:?}");
    assert!(
        failed.last_error.contains("certificate"),
        "the error names the certificate: {}",
        failed.last_error
    );
    assert!(receiver.requests().is_empty(), "{:?}", receiver.requests());

    // With `--outbound-ca-file` naming the CA, the signed POST is delivered.
    let trusting = spawn_app_with(
        Backend::Sqlite,
        ServerSettings {
            outbound_ca_file: Some(ca.ca_cert()),
            ..with_webhooks(&key)
        },
    )
    .await;
    let secret = endpoint_with_an_event(&trusting, &url, "run-trusted").await;
    let delivered = settled(&trusting, "the delivery succeeded", |d| {
        d.status() == DeliveryStatus::Delivered
    })
    .await;
    assert_eq!(delivered.attempts, 1);
    let requests = receiver.requests();
    assert_eq!(
        requests.len(),
        1,
        "only the trusting server got through: {requests:?}"
    );
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.target.as_str()),
        ("POST", "/hook")
    );
    let mut headers = axum::http::HeaderMap::new();
    for (name, value) in &request.headers {
        headers.append(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    assert_eq!(headers["webhook-id"], delivered.event_id.as_str());
    standardwebhooks::Webhook::new(&secret)
        .unwrap()
        .verify(request.body.as_bytes(), &headers)
        .expect("the POST carries a valid signature by the endpoint's secret");
}
