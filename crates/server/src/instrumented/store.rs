//! A wrapper around any backend that gives each operation of both store contracts a span and a
//! latency measurement, so traces show store time under the RPC's span and `/metrics` shows it
//! per operation.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;

use crate::telemetry::metrics;
use checkpointd_core::domain::{
    CheckpointSummary, Epoch, IntentOutcome, JournalAction, ListQuery, MessageChain, NewCheckpoint,
    NewToolIntent, NewToolResult, RunId, RunInfo, RunKey, SavedCheckpoint, Step, Tenant,
    ToolRecord,
};
use checkpointd_core::error::Result;
use checkpointd_core::plan::JournalRewrite;
use checkpointd_storage::store::{
    CheckpointRef, CheckpointStore, DeletedCheckpoints, LatestHead, RetentionFacts, RetentionStore,
    Snapshot, Which,
};

/// Forwards every call to `inner`, timed and traced; a [`CheckpointStore`] and a
/// [`RetentionStore`] wherever `inner` is.
pub struct InstrumentedStore<S: ?Sized> {
    inner: Arc<S>,
    /// `db.system`: `postgresql`, `sqlite` or `memory`.
    system: &'static str,
}

impl<S: ?Sized + Send + Sync> InstrumentedStore<S> {
    pub fn new(inner: Arc<S>, system: &'static str) -> Self {
        Self { inner, system }
    }

    async fn observe<T>(
        &self,
        operation: &'static str,
        work: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let span = tracing::info_span!(
            "store",
            otel.name = operation,
            db.system = self.system,
            db.operation = operation,
        );
        metrics::observe_store(span, operation, self.system, work).await
    }
}

/// State plus the messages this save appends: what a save writes.
fn written_bytes(checkpoint: &NewCheckpoint) -> u64 {
    let messages: usize = checkpoint.messages.iter().map(|m| m.content.len()).sum();
    (checkpoint.state.len() + messages) as u64
}

#[async_trait]
impl<S: CheckpointStore + ?Sized> CheckpointStore for InstrumentedStore<S> {
    async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> {
        let saved = self
            .observe("store.save", self.inner.save(checkpoint))
            .await?;
        if !saved.already_existed {
            metrics::record_save(self.system, written_bytes(checkpoint));
        }
        Ok(saved)
    }

    async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)> {
        self.observe(
            "store.record_tool_result",
            self.inner.record_tool_result(result),
        )
        .await
    }

    async fn record_tool_results(
        &self,
        results: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>> {
        self.observe(
            "store.record_tool_results",
            self.inner.record_tool_results(results),
        )
        .await
    }

    async fn record_tool_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome> {
        self.observe(
            "store.record_tool_intent",
            self.inner.record_tool_intent(intent),
        )
        .await
    }

    async fn rewrite_journal(&self, rewrite: &JournalRewrite) -> Result<Vec<Step>> {
        self.observe("store.rewrite_journal", self.inner.rewrite_journal(rewrite))
            .await
    }

    async fn journal_actions(&self, run: &RunKey) -> Result<Vec<JournalAction>> {
        self.observe("store.journal_actions", self.inner.journal_actions(run))
            .await
    }

    async fn load_window(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
        journal: checkpointd_core::domain::JournalScope,
    ) -> Result<Option<Snapshot>> {
        self.observe(
            "store.load",
            self.inner.load_window(run, which, window, journal),
        )
        .await
    }

    async fn window_stops_short(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
    ) -> Result<Option<Step>> {
        self.observe(
            "store.window_stops_short",
            self.inner.window_stops_short(run, which, window),
        )
        .await
    }

    async fn tools(&self, run: &RunKey) -> Result<Vec<ToolRecord>> {
        self.observe("store.tools", self.inner.tools(run)).await
    }

    async fn steps(&self, run: &RunKey) -> Result<Vec<Step>> {
        self.observe("store.steps", self.inner.steps(run)).await
    }

    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()> {
        self.observe("store.quarantine", self.inner.quarantine(run, step, reason))
            .await
    }

    async fn begin_resume(&self, run: &RunKey) -> Result<Epoch> {
        self.observe("store.begin_resume", self.inner.begin_resume(run))
            .await
    }

    async fn rewind(&self, run: &RunKey, epoch: Epoch, chain: MessageChain) -> Result<()> {
        self.observe("store.rewind", self.inner.rewind(run, epoch, chain))
            .await
    }

    async fn list(&self, run: &RunKey, query: &ListQuery) -> Result<Vec<CheckpointSummary>> {
        self.observe("store.list", self.inner.list(run, query))
            .await
    }

    async fn label_step(&self, run: &RunKey, label: &str) -> Result<Option<Step>> {
        self.observe("store.label_step", self.inner.label_step(run, label))
            .await
    }

    async fn run_info(&self, run: &RunKey) -> Result<Option<RunInfo>> {
        self.observe("store.run_info", self.inner.run_info(run))
            .await
    }

    async fn list_runs(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>> {
        self.observe(
            "store.list_runs",
            self.inner.list_runs(tenant, prefix, after, limit),
        )
        .await
    }

    async fn run_exists(&self, run: &RunKey) -> Result<bool> {
        self.observe("store.run_exists", self.inner.run_exists(run))
            .await
    }

    async fn delete_run(&self, run: &RunKey) -> Result<u64> {
        self.observe("store.delete_run", self.inner.delete_run(run))
            .await
    }

    async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints> {
        self.observe(
            "store.delete_checkpoints",
            self.inner.delete_checkpoints(run, epoch, steps),
        )
        .await
    }

    async fn ping(&self) -> Result<()> {
        // Health polls every second; a span per ping would only add noise to traces.
        self.inner.ping().await
    }

    async fn latest_head(&self, run: &RunKey) -> Result<Option<LatestHead>> {
        self.observe("store.latest_head", self.inner.latest_head(run))
            .await
    }
}

#[async_trait]
impl<S: RetentionStore + ?Sized> RetentionStore for InstrumentedStore<S> {
    async fn set_retention(&self, run: &RunKey, policy: Option<&str>) -> Result<()> {
        self.observe("store.set_retention", self.inner.set_retention(run, policy))
            .await
    }

    async fn pin(&self, run: &RunKey, step: Option<Step>, source: &str) -> Result<Option<Step>> {
        self.observe("store.pin", self.inner.pin(run, step, source))
            .await
    }

    async fn unpin(&self, run: &RunKey, step: Option<Step>, source: Option<&str>) -> Result<u64> {
        self.observe("store.unpin", self.inner.unpin(run, step, source))
            .await
    }

    async fn retention_facts(&self, run: &RunKey) -> Result<Option<RetentionFacts>> {
        self.observe("store.retention_facts", self.inner.retention_facts(run))
            .await
    }

    async fn runs_after(
        &self,
        after: Option<&RunKey>,
        limit: usize,
        with_policy_only: bool,
    ) -> Result<Vec<RunKey>> {
        self.observe(
            "store.runs_after",
            self.inner.runs_after(after, limit, with_policy_only),
        )
        .await
    }

    async fn prune(&self, run: &RunKey, epoch: Epoch, steps: &[Step]) -> Result<u64> {
        self.observe("store.prune", self.inner.prune(run, epoch, steps))
            .await
    }

    async fn checkpoints_after(
        &self,
        tenant: Option<&Tenant>,
        after: Option<&CheckpointRef>,
        limit: usize,
    ) -> Result<Vec<CheckpointRef>> {
        self.observe(
            "store.checkpoints_after",
            self.inner.checkpoints_after(tenant, after, limit),
        )
        .await
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The checkpoint-store behaviour suite through the wrapper, around the memory store.

    use std::sync::Arc;

    use checkpointd_core::domain::{RunKey, Step};
    use checkpointd_storage::store::tests::{Damage, MemoryBackend, TestBackend};
    use checkpointd_storage::store::{CheckpointStore, RetentionStore};

    use super::InstrumentedStore;

    /// The instrumented wrapper around another backend's store.
    pub(crate) struct Instrumented<B> {
        inner: B,
        store: Arc<dyn CheckpointStore>,
        retention: Arc<dyn RetentionStore>,
    }

    impl<B: TestBackend> TestBackend for Instrumented<B> {
        async fn create() -> Self {
            let inner = B::create().await;
            let store = Arc::new(InstrumentedStore::new(inner.store(), "test"));
            let retention = Arc::new(InstrumentedStore::new(inner.retention(), "test"));
            Self {
                inner,
                store,
                retention,
            }
        }

        fn store(&self) -> Arc<dyn CheckpointStore> {
            self.store.clone()
        }

        fn retention(&self) -> Arc<dyn RetentionStore> {
            self.retention.clone()
        }

        async fn damage_state(&self, run: &RunKey, step: Step) {
            self.inner.damage_state(run, step).await;
        }

        async fn damage_tool_output(&self, run: &RunKey, seq: u64) {
            self.inner.damage_tool_output(run, seq).await;
        }

        async fn damage(&self, run: &RunKey, damage: Damage) {
            self.inner.damage(run, damage).await;
        }
    }

    checkpointd_storage::store_behaviours!(Instrumented<MemoryBackend>);
}
