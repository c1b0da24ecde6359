//! The watch streams: a tenant's task events and one run's new checkpoints, pushed to the
//! client as they are committed. Each stream is a task that looks at the store every
//! [`POLL_INTERVAL`] (so changes other processes commit arrive too) and ends when the client
//! goes away.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::service::Engine;
use crate::service::checkpoints::ListRequest;
use checkpointd_core::domain::{CheckpointSummary, PageSize, RunKey, Step, Tenant};
use checkpointd_core::error::Result;
use checkpointd_core::notify::Event;
use checkpointd_storage::notifications::NotificationStore;

/// How often a stream looks for what is new.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// Most events read per look (checkpoints are read a default page at a time).
const BATCH: usize = 100;
/// Items buffered for a slow client before the stream waits for it.
const BUFFER: usize = 64;

/// The tenant's task events with a sequence above `after`, then each new one, in order.
pub fn task_events(
    store: Arc<dyn NotificationStore>,
    tenant: Tenant,
    mut after: u64,
) -> ReceiverStream<Result<Event>> {
    let (sender, receiver) = mpsc::channel(BUFFER);
    tokio::spawn(async move {
        loop {
            let batch = match store.events_after(&tenant, after, BATCH).await {
                Ok(batch) => batch,
                Err(error) => {
                    let _ = sender.send(Err(error)).await;
                    return;
                }
            };
            let full = batch.len() == BATCH;
            for event in batch {
                after = event.sequence;
                if event.kind.is_task() && sender.send(Ok(event)).await.is_err() {
                    return;
                }
            }
            if !full && !wait(&sender).await {
                return;
            }
        }
    });
    ReceiverStream::new(receiver)
}

/// The run's checkpoints above `after`, then each new one, in step order.
pub fn run_checkpoints(
    engine: Engine,
    run: RunKey,
    mut after: Option<Step>,
) -> ReceiverStream<Result<CheckpointSummary>> {
    let (sender, receiver) = mpsc::channel(BUFFER);
    tokio::spawn(async move {
        loop {
            let request = ListRequest {
                page_size: PageSize::DEFAULT,
                after,
                descending: false,
                before: None,
                metadata: Default::default(),
            };
            let (page, next) = match engine.list(&run, &request).await {
                Ok(page) => page,
                Err(error) => {
                    let _ = sender.send(Err(error)).await;
                    return;
                }
            };
            for summary in page {
                after = Some(summary.step);
                if sender.send(Ok(summary)).await.is_err() {
                    return;
                }
            }
            if next.is_none() && !wait(&sender).await {
                return;
            }
        }
    });
    ReceiverStream::new(receiver)
}

/// Waits a poll interval; `false` once the client has gone, so the task ends.
async fn wait<T>(sender: &mpsc::Sender<T>) -> bool {
    tokio::select! {
        () = sender.closed() => false,
        () = tokio::time::sleep(POLL_INTERVAL) => true,
    }
}
