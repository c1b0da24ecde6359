//! gRPC health from the test's side: watch a service's status and take its changes one by one.

use std::time::Duration;

use checkpointd::config::ServerSettings;
use tokio_stream::StreamExt;
use tonic::Streaming;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::{TestApp, serve_on};

/// An in-memory app whose drain after shutdown lasts at most `drain_timeout`.
pub async fn serve_draining(drain_timeout: Duration) -> TestApp {
    serve_on(
        "memory://",
        ServerSettings {
            drain_timeout,
            ..ServerSettings::default()
        },
    )
    .await
}

/// Opens a Watch stream on `service` (`""`: the server as a whole).
pub async fn watch_health(app: &TestApp, service: &str) -> Streaming<HealthCheckResponse> {
    HealthClient::new(app.channel().await)
        .watch(HealthCheckRequest {
            service: service.to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// The next status the stream reports, within 20 s (a store outage takes a few health
/// intervals and a connect timeout to notice).
pub async fn next_status(statuses: &mut Streaming<HealthCheckResponse>) -> ServingStatus {
    let response = tokio::time::timeout(Duration::from_secs(20), statuses.next())
        .await
        .expect("no health change within 20 s")
        .expect("health stream ended")
        .unwrap();
    ServingStatus::try_from(response.status).unwrap()
}
