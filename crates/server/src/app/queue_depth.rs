//! Polls the task queue's depth by state for the `checkpointd.queue.depth` gauge.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::telemetry::metrics;
use checkpointd_storage::queue::{TaskQueue, TaskState};

/// Counting is a scan of the tasks table; every 15 s keeps it off the database's back.
const POLL_INTERVAL: Duration = Duration::from_secs(15);

/// Publishes the depth now and then every [`POLL_INTERVAL`] until `stop` is cancelled. Every
/// state is published, with zero when it has no tasks, so the series never go missing.
pub async fn poll(queue: Arc<dyn TaskQueue>, stop: CancellationToken) {
    let mut ticks = tokio::time::interval(POLL_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        match queue.depth().await {
            Ok(counts) => {
                let depth = TaskState::ALL
                    .iter()
                    .map(|state| {
                        let count = counts
                            .iter()
                            .find(|(counted, _)| counted == state)
                            .map_or(0, |(_, count)| *count);
                        (state.as_str(), count)
                    })
                    .collect();
                metrics::set_queue_depth(depth);
            }
            Err(error) => tracing::warn!(%error, "cannot count queued tasks"),
        }
    }
}
