//! A wrapper around any task queue that gives each operation a span (`queue.<op>`) and a
//! latency measurement, so traces show queue time under the RPC's span and `/metrics` shows
//! it per operation beside the checkpoint store's.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use crate::telemetry::metrics;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::Result;
use checkpointd_storage::queue::{
    ClaimBatch, NewTask, Task, TaskId, TaskQueue, TaskState, Transition, WaitingPage, WaitingQuery,
};

/// Forwards every call to `inner`, timed and traced.
pub struct InstrumentedQueue {
    inner: Arc<dyn TaskQueue>,
    /// `db.system`: `postgresql`, `sqlite` or `memory`.
    system: &'static str,
}

impl InstrumentedQueue {
    pub fn wrap(inner: Arc<dyn TaskQueue>, system: &'static str) -> Arc<dyn TaskQueue> {
        Arc::new(Self { inner, system })
    }

    /// Runs `work` inside a `queue.<op>` span and records its latency in the store-latency
    /// histogram, under the queue operation's name.
    async fn observe<T>(
        &self,
        operation: &'static str,
        work: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let span = tracing::info_span!(
            "queue",
            otel.name = operation,
            db.system = self.system,
            db.operation = operation,
        );
        metrics::observe_store(span, operation, self.system, work).await
    }
}

#[async_trait]
impl TaskQueue for InstrumentedQueue {
    async fn enqueue(&self, tenant: &Tenant, task: NewTask) -> Result<(Task, bool)> {
        self.observe("queue.enqueue", self.inner.enqueue(tenant, task))
            .await
    }

    async fn claim(
        &self,
        tenant: &Tenant,
        worker: &str,
        lease: Duration,
        batch: ClaimBatch,
        now: SystemTime,
    ) -> Result<Vec<Task>> {
        self.observe(
            "queue.claim",
            self.inner.claim(tenant, worker, lease, batch, now),
        )
        .await
    }

    async fn update(
        &self,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task> {
        self.observe(
            "queue.update",
            self.inner.update(tenant, id, transition, now),
        )
        .await
    }

    async fn get(&self, tenant: &Tenant, id: &TaskId) -> Result<Option<Task>> {
        self.observe("queue.get", self.inner.get(tenant, id)).await
    }

    async fn list_tasks(
        &self,
        tenant: &Tenant,
        state: Option<TaskState>,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<Task>> {
        self.observe(
            "queue.list_tasks",
            self.inner.list_tasks(tenant, state, after, limit),
        )
        .await
    }

    async fn list_waiting(&self, tenant: &Tenant, query: &WaitingQuery) -> Result<WaitingPage> {
        self.observe("queue.list_waiting", self.inner.list_waiting(tenant, query))
            .await
    }

    async fn reap_exhausted(&self, now: SystemTime, limit: usize) -> Result<u64> {
        self.observe(
            "queue.reap_exhausted",
            self.inner.reap_exhausted(now, limit),
        )
        .await
    }

    async fn depth(&self) -> Result<Vec<(TaskState, u64)>> {
        self.observe("queue.depth", self.inner.depth()).await
    }
}

#[cfg(test)]
mod tests {
    //! The queue behaviour suite through the wrapper, around the memory queue.

    use std::sync::Arc;
    use std::time::SystemTime;

    use async_trait::async_trait;
    use checkpointd_core::domain::Tenant;
    use checkpointd_storage::queue::tests::{MemoryBackend, TestBackend};
    use checkpointd_storage::queue::{Task, TaskQueue};

    use super::InstrumentedQueue;

    /// The instrumented wrapper around another backend's queue: every handle is wrapped, the
    /// backdoor writes go to the backend underneath.
    pub(super) struct Instrumented<B>(B);

    #[async_trait]
    impl<B: TestBackend> TestBackend for Instrumented<B> {
        async fn fresh() -> Self {
            Self(B::fresh().await)
        }

        async fn open(&self) -> Arc<dyn TaskQueue> {
            InstrumentedQueue::wrap(self.0.open().await, "test")
        }

        async fn put(&self, tenant: &Tenant, task: &Task) {
            self.0.put(tenant, task).await;
        }

        fn stored(time: SystemTime) -> SystemTime {
            B::stored(time)
        }
    }

    checkpointd_storage::queue_behaviours!(Instrumented<MemoryBackend>);
}
