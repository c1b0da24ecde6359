//! The one shutdown of a server: a cancellation every background loop selects on, and a
//! tracker that knows when they have all stopped.

use std::future::Future;

use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard, WaitForCancellationFuture};
use tokio_util::task::TaskTracker;

/// Begins once and is seen by everyone: cloning shares the same shutdown.
///
/// Every background task of a server is spawned through [`Shutdown::spawn`] and returns once
/// [`Shutdown::begun`] resolves, so [`Shutdown::finished`] proves that nothing is left running.
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    token: CancellationToken,
    tracker: TaskTracker,
}

impl Shutdown {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the shutdown; calling it again changes nothing.
    pub fn begin(&self) {
        self.token.cancel();
    }

    pub fn has_begun(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves once shutdown has begun; what every background loop selects on.
    pub fn begun(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }

    /// The cancellation itself, for loops written against a bare token (the pruner).
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// Runs `task` as one of the server's background tasks, which must end once shutdown
    /// has begun.
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.spawn(task)
    }

    /// Begins the shutdown when the returned guard is dropped, so an owner that goes away
    /// without asking (a failed test, an early return) still stops its server.
    pub fn begin_on_drop(&self) -> DropGuard {
        self.token.clone().drop_guard()
    }

    /// Waits until every task spawned so far has ended; call after [`Shutdown::begin`].
    pub async fn finished(&self) {
        self.tracker.close();
        self.tracker.wait().await;
    }

    /// Whether [`Shutdown::finished`] has returned: no background task is left.
    pub fn is_finished(&self) -> bool {
        self.tracker.is_closed() && self.tracker.is_empty()
    }
}
