//! Drives the gRPC health status from the store's reachability.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use super::CHECKPOINT_SERVICE_NAME;
use crate::service::Engine;

/// Pings the store (through the engine) once and publishes the outcome, both for the checkpoint
/// service and for the server as a whole (the empty service name). Returns whether the store
/// answered.
pub async fn check_store(engine: &Engine, reporter: &HealthReporter, timeout: Duration) -> bool {
    let healthy = matches!(
        tokio::time::timeout(timeout, engine.ping()).await,
        Ok(Ok(()))
    );
    publish(reporter, healthy).await;
    healthy
}

async fn publish(reporter: &HealthReporter, healthy: bool) {
    let status = if healthy {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    };
    reporter
        .set_service_status(CHECKPOINT_SERVICE_NAME, status)
        .await;
    reporter.set_service_status("", status).await;
}

/// Re-checks the store every `interval` until `stop` is cancelled, logging each change; then
/// reports NOT_SERVING so load balancers stop routing to a draining server.
pub async fn watch_store(
    engine: Engine,
    reporter: HealthReporter,
    interval: Duration,
    mut healthy: bool,
    stop: CancellationToken,
) {
    let timeout = interval.max(Duration::from_millis(500));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            () = stop.cancelled() => break,
        }
        let now = check_store(&engine, &reporter, timeout).await;
        if now != healthy {
            if now {
                tracing::info!("store reachable again; health is SERVING");
            } else {
                tracing::warn!("store unreachable; health is NOT_SERVING");
            }
            healthy = now;
        }
    }
    publish(&reporter, false).await;
}

/// Mirrors the cache's reachability as the status of [`super::CACHE_SERVICE_NAME`] until
/// `stop` is cancelled. The server as a whole stays SERVING: without Redis it is slower, not down.
pub async fn watch_cache(
    reporter: HealthReporter,
    mut cache_up: tokio::sync::watch::Receiver<bool>,
    stop: CancellationToken,
) {
    loop {
        let up = *cache_up.borrow_and_update();
        publish_cache(&reporter, up).await;
        tokio::select! {
            changed = cache_up.changed() => if changed.is_err() { break },
            () = stop.cancelled() => break,
        }
    }
    publish_cache(&reporter, false).await;
}

/// Publishes the cache's reachability as the status of [`super::CACHE_SERVICE_NAME`].
pub async fn publish_cache(reporter: &HealthReporter, up: bool) {
    let status = if up {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    };
    reporter
        .set_service_status(super::CACHE_SERVICE_NAME, status)
        .await;
}
