//! The Redis cache with its writer caught up after every call, so that a read which follows a
//! write finds that write in Redis: the suite then runs against cache hits, not only against
//! misses that fall through to the store while the writer is still busy.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;

use crate::cache::CachedStore;
use checkpointd_core::domain::{
    CheckpointSummary, Epoch, ListQuery, MessageChain, NewCheckpoint, NewToolResult, RunId,
    RunInfo, RunKey, SavedCheckpoint, Step, Tenant, ToolRecord,
};
use checkpointd_core::error::Result;
use checkpointd_storage::store::{CheckpointStore, LatestHead, Snapshot, Which};

/// Forwards to the cache, then waits on its flush barrier before answering.
pub(super) struct Settled(pub(super) Arc<CachedStore>);

impl Settled {
    async fn settle<T>(&self, call: impl Future<Output = Result<T>>) -> Result<T> {
        let answer = call.await;
        self.0.flushed().await;
        answer
    }
}

#[async_trait]
impl CheckpointStore for Settled {
    async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> {
        self.settle(self.0.save(checkpoint)).await
    }

    async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)> {
        self.settle(self.0.record_tool_result(result)).await
    }

    async fn record_tool_results(
        &self,
        results: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>> {
        self.settle(self.0.record_tool_results(results)).await
    }

    async fn record_tool_intent(
        &self,
        intent: &checkpointd_core::domain::NewToolIntent,
    ) -> Result<checkpointd_core::domain::IntentOutcome> {
        self.settle(self.0.record_tool_intent(intent)).await
    }

    async fn rewrite_journal(
        &self,
        rewrite: &checkpointd_core::plan::JournalRewrite,
    ) -> Result<Vec<Step>> {
        self.settle(self.0.rewrite_journal(rewrite)).await
    }

    async fn journal_actions(
        &self,
        run: &RunKey,
    ) -> Result<Vec<checkpointd_core::domain::JournalAction>> {
        self.settle(self.0.journal_actions(run)).await
    }

    async fn load_window(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
        journal: checkpointd_core::domain::JournalScope,
    ) -> Result<Option<Snapshot>> {
        self.settle(self.0.load_window(run, which, window, journal))
            .await
    }

    async fn window_stops_short(
        &self,
        run: &RunKey,
        which: Which,
        window: checkpointd_core::domain::MessageWindow,
    ) -> Result<Option<Step>> {
        self.settle(self.0.window_stops_short(run, which, window))
            .await
    }

    async fn tools(&self, run: &RunKey) -> Result<Vec<ToolRecord>> {
        self.settle(self.0.tools(run)).await
    }

    async fn steps(&self, run: &RunKey) -> Result<Vec<Step>> {
        self.settle(self.0.steps(run)).await
    }

    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()> {
        self.settle(self.0.quarantine(run, step, reason)).await
    }

    async fn begin_resume(&self, run: &RunKey) -> Result<Epoch> {
        self.settle(self.0.begin_resume(run)).await
    }

    async fn rewind(&self, run: &RunKey, epoch: Epoch, chain: MessageChain) -> Result<()> {
        self.settle(self.0.rewind(run, epoch, chain)).await
    }

    async fn list(&self, run: &RunKey, query: &ListQuery) -> Result<Vec<CheckpointSummary>> {
        self.settle(self.0.list(run, query)).await
    }

    async fn label_step(&self, run: &RunKey, label: &str) -> Result<Option<Step>> {
        self.settle(self.0.label_step(run, label)).await
    }

    async fn run_info(&self, run: &RunKey) -> Result<Option<RunInfo>> {
        self.settle(self.0.run_info(run)).await
    }

    async fn list_runs(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>> {
        self.settle(self.0.list_runs(tenant, prefix, after, limit))
            .await
    }

    async fn run_exists(&self, run: &RunKey) -> Result<bool> {
        self.settle(self.0.run_exists(run)).await
    }

    async fn delete_run(&self, run: &RunKey) -> Result<u64> {
        self.settle(self.0.delete_run(run)).await
    }

    async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<checkpointd_storage::store::DeletedCheckpoints> {
        self.settle(self.0.delete_checkpoints(run, epoch, steps))
            .await
    }

    async fn ping(&self) -> Result<()> {
        self.settle(self.0.ping()).await
    }

    async fn latest_head(&self, run: &RunKey) -> Result<Option<LatestHead>> {
        self.settle(self.0.latest_head(run)).await
    }
}
