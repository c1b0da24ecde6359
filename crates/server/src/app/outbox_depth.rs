//! Polls the notification outbox's deliveries by status for the
//! `checkpointd.webhook.outbox_depth` gauge.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::telemetry::metrics;
use checkpointd_core::notify::DeliveryStatus;
use checkpointd_storage::notifications::NotificationStore;

/// Counting is a scan of the deliveries; every 15 s, like the queue depth.
const POLL_INTERVAL: Duration = Duration::from_secs(15);

/// Publishes the depth now and then every [`POLL_INTERVAL`] until `stop` is cancelled; every
/// status is published, with zero when none has it.
pub async fn poll(store: Arc<dyn NotificationStore>, stop: CancellationToken) {
    let mut ticks = tokio::time::interval(POLL_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        match store.delivery_depth().await {
            Ok(counts) => metrics::set_outbox_depth(
                DeliveryStatus::ALL
                    .iter()
                    .map(|status| {
                        let count = counts
                            .iter()
                            .find(|(counted, _)| counted == status)
                            .map_or(0, |(_, count)| *count);
                        (status.as_str(), count)
                    })
                    .collect(),
            ),
            Err(error) => tracing::warn!(%error, "cannot count webhook deliveries"),
        }
    }
}
