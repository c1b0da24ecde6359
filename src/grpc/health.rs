//! Drives the gRPC health status from the store's reachability.

use std::sync::Arc;
use std::time::Duration;

use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use super::CHECKPOINT_SERVICE_NAME;
use crate::store::CheckpointStore;

/// Pings the store every `interval` and reports SERVING or NOT_SERVING, both for the checkpoint
/// service and for the server as a whole (the empty service name), until `stop` turns true.
pub async fn watch_store(
    store: Arc<dyn CheckpointStore>,
    reporter: HealthReporter,
    interval: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut last = None;
    loop {
        let healthy = matches!(
            tokio::time::timeout(interval.max(Duration::from_millis(500)), store.ping()).await,
            Ok(Ok(()))
        );
        if last != Some(healthy) {
            let status = if healthy {
                ServingStatus::Serving
            } else {
                ServingStatus::NotServing
            };
            if healthy {
                tracing::info!("store reachable; health is SERVING");
            } else {
                tracing::warn!("store unreachable; health is NOT_SERVING");
            }
            reporter
                .set_service_status(CHECKPOINT_SERVICE_NAME, status)
                .await;
            reporter.set_service_status("", status).await;
            last = Some(healthy);
        }
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = stop.changed() => break,
        }
    }
    reporter
        .set_service_status(CHECKPOINT_SERVICE_NAME, ServingStatus::NotServing)
        .await;
    reporter
        .set_service_status("", ServingStatus::NotServing)
        .await;
}
