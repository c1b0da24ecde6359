//! The depth gauges' one polling loop: count rows by status now and then, and publish every
//! status (zero when none has it) so no series goes missing. The task queue's depth and the
//! webhook outbox's are two uses of it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::telemetry::metrics;
use checkpointd_core::error::Result;
use checkpointd_core::notify::DeliveryStatus;
use checkpointd_storage::notifications::NotificationStore;
use checkpointd_storage::queue::{TaskQueue, TaskState};

/// Counting is a scan of a table; every 15 s keeps it off the database's back.
const POLL_INTERVAL: Duration = Duration::from_secs(15);

/// What one gauge counts and where it publishes.
struct Gauge<S: 'static, C> {
    /// Every status, in the order published.
    statuses: &'static [S],
    label: fn(S) -> &'static str,
    count: C,
    publish: fn(Vec<(&'static str, u64)>),
    /// What the warning says could not be counted.
    counted: &'static str,
}

/// Publishes the depth now and then every [`POLL_INTERVAL`] until `stop` is cancelled. A count
/// that fails is logged and the previous depth stays published.
async fn poll<S, C, F>(gauge: Gauge<S, C>, stop: CancellationToken)
where
    S: Copy + PartialEq + 'static,
    C: Fn() -> F,
    F: Future<Output = Result<Vec<(S, u64)>>>,
{
    let mut ticks = tokio::time::interval(POLL_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        match (gauge.count)().await {
            Ok(counts) => (gauge.publish)(every_status(gauge.statuses, gauge.label, &counts)),
            Err(error) => {
                tracing::warn!(%error, what = gauge.counted, "cannot count for a depth gauge")
            }
        }
    }
}

/// One `(label, count)` per status of `statuses`, zero for those `counts` does not name.
fn every_status<S: Copy + PartialEq>(
    statuses: &[S],
    label: fn(S) -> &'static str,
    counts: &[(S, u64)],
) -> Vec<(&'static str, u64)> {
    statuses
        .iter()
        .map(|status| {
            let count = counts
                .iter()
                .find(|(counted, _)| counted == status)
                .map_or(0, |(_, count)| *count);
            (label(*status), count)
        })
        .collect()
}

/// The `checkpointd.queue.depth` gauge: tasks by state.
pub async fn poll_queue(queue: Arc<dyn TaskQueue>, stop: CancellationToken) {
    let gauge = Gauge {
        statuses: &TaskState::ALL,
        label: TaskState::as_str,
        count: || queue.depth(),
        publish: metrics::set_queue_depth,
        counted: "queued tasks",
    };
    poll(gauge, stop).await;
}

/// The `checkpointd.webhook.outbox_depth` gauge: deliveries by status.
pub async fn poll_outbox(store: Arc<dyn NotificationStore>, stop: CancellationToken) {
    let gauge = Gauge {
        statuses: &DeliveryStatus::ALL,
        label: DeliveryStatus::as_str,
        count: || store.delivery_depth(),
        publish: metrics::set_outbox_depth,
        counted: "webhook deliveries",
    };
    poll(gauge, stop).await;
}

#[cfg(test)]
mod tests {
    use super::every_status;
    use checkpointd_storage::queue::TaskState;

    #[test]
    fn every_status_is_published_with_zero_for_the_uncounted() {
        let published = every_status(
            &TaskState::ALL,
            TaskState::as_str,
            &[(TaskState::Dead, 3), (TaskState::Pending, 5)],
        );
        assert_eq!(published.len(), TaskState::ALL.len());
        for (label, count) in published {
            let expected = match label {
                "dead" => 3,
                "pending" => 5,
                _ => 0,
            };
            assert_eq!(count, expected, "{label}");
        }
    }
}
