//! `wrap_checkpoint_store!`: implements [`super::CheckpointStore`] for a wrapper that writes
//! out only the methods it changes and names the ones that go to the wrapped store untouched,
//! so a wrapper states what it intercepts and no forwarding is kept by hand.
//!
//! ```text
//! wrap_checkpoint_store! {
//!     impl for CachedStore, wrapping self.inner,
//!     forwarding [tools, steps, begin_resume, list, run_exists, ping, latest_head],
//!     {
//!         async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> { ... }
//!         // ... every other method of the contract
//!     }
//! }
//! ```
//!
//! The forwarded methods are spelled out here before the impl block is handed to
//! `async_trait`, which only sees finished methods; a method both written and forwarded, or
//! neither, is the usual "duplicate" or "missing item" error of the impl.

/// See the module documentation.
#[macro_export]
macro_rules! wrap_checkpoint_store {
    (
        impl for $wrapper:ty, wrapping self.$inner:ident,
        forwarding [$($forwarded:ident),* $(,)?],
        { $($own:tt)* }
    ) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($forwarded)*], [$($own)*]);
    };
    (@build $wrapper:ty, $inner:ident, [], [$($methods:tt)*]) => {
        #[async_trait::async_trait]
        impl $crate::store::CheckpointStore for $wrapper {
            $($methods)*
        }
    };
    (@build $wrapper:ty, $inner:ident, [save $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn save(
                &self,
                checkpoint: &$crate::__core::domain::NewCheckpoint,
            ) -> $crate::__core::error::Result<$crate::__core::domain::SavedCheckpoint> {
                self.$inner.save(checkpoint).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [record_tool_result $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn record_tool_result(
                &self,
                result: &$crate::__core::domain::NewToolResult,
            ) -> $crate::__core::error::Result<($crate::__core::domain::ToolRecord, bool)> {
                self.$inner.record_tool_result(result).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [record_tool_results $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn record_tool_results(
                &self,
                results: &[$crate::__core::domain::NewToolResult],
            ) -> $crate::__core::error::Result<Vec<($crate::__core::domain::ToolRecord, bool)>> {
                self.$inner.record_tool_results(results).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [record_tool_intent $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn record_tool_intent(
                &self,
                intent: &$crate::__core::domain::NewToolIntent,
            ) -> $crate::__core::error::Result<$crate::__core::domain::IntentOutcome> {
                self.$inner.record_tool_intent(intent).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [rewrite_journal $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn rewrite_journal(
                &self,
                rewrite: &$crate::__core::plan::JournalRewrite,
            ) -> $crate::__core::error::Result<Vec<$crate::__core::domain::Step>> {
                self.$inner.rewrite_journal(rewrite).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [journal_actions $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn journal_actions(
                &self,
                run: &$crate::__core::domain::RunKey,
            ) -> $crate::__core::error::Result<Vec<$crate::__core::domain::JournalAction>> {
                self.$inner.journal_actions(run).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [load $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn load_window(
                &self,
                run: &$crate::__core::domain::RunKey,
                which: $crate::store::Which,
                window: $crate::__core::domain::MessageWindow,
                journal: $crate::__core::domain::JournalScope,
            ) -> $crate::__core::error::Result<Option<$crate::store::Snapshot>> {
                self.$inner.load_window(run, which, window, journal).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [window_stops_short $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn window_stops_short(
                &self,
                run: &$crate::__core::domain::RunKey,
                which: $crate::store::Which,
                window: $crate::__core::domain::MessageWindow,
            ) -> $crate::__core::error::Result<Option<$crate::__core::domain::Step>> {
                self.$inner.window_stops_short(run, which, window).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [tools $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn tools(
                &self,
                run: &$crate::__core::domain::RunKey,
            ) -> $crate::__core::error::Result<Vec<$crate::__core::domain::ToolRecord>> {
                self.$inner.tools(run).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [steps $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn steps(
                &self,
                run: &$crate::__core::domain::RunKey,
            ) -> $crate::__core::error::Result<Vec<$crate::__core::domain::Step>> {
                self.$inner.steps(run).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [quarantine $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn quarantine(
                &self,
                run: &$crate::__core::domain::RunKey,
                step: $crate::__core::domain::Step,
                reason: &str,
            ) -> $crate::__core::error::Result<()> {
                self.$inner.quarantine(run, step, reason).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [begin_resume $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn begin_resume(&self, run: &$crate::__core::domain::RunKey) -> $crate::__core::error::Result<$crate::__core::domain::Epoch> {
                self.$inner.begin_resume(run).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [rewind $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn rewind(
                &self,
                run: &$crate::__core::domain::RunKey,
                epoch: $crate::__core::domain::Epoch,
                chain: $crate::__core::domain::MessageChain,
            ) -> $crate::__core::error::Result<()> {
                self.$inner.rewind(run, epoch, chain).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [list $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn list(
                &self,
                run: &$crate::__core::domain::RunKey,
                query: &$crate::__core::domain::ListQuery,
            ) -> $crate::__core::error::Result<Vec<$crate::__core::domain::CheckpointSummary>> {
                self.$inner.list(run, query).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [label_step $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn label_step(
                &self,
                run: &$crate::__core::domain::RunKey,
                label: &str,
            ) -> $crate::__core::error::Result<Option<$crate::__core::domain::Step>> {
                self.$inner.label_step(run, label).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [run_info $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn run_info(
                &self,
                run: &$crate::__core::domain::RunKey,
            ) -> $crate::__core::error::Result<Option<$crate::__core::domain::RunInfo>> {
                self.$inner.run_info(run).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [list_runs $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn list_runs(
                &self,
                tenant: &$crate::__core::domain::Tenant,
                prefix: &str,
                after: Option<&$crate::__core::domain::RunId>,
                limit: usize,
            ) -> $crate::__core::error::Result<Vec<$crate::__core::domain::RunInfo>> {
                self.$inner.list_runs(tenant, prefix, after, limit).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [run_exists $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn run_exists(&self, run: &$crate::__core::domain::RunKey) -> $crate::__core::error::Result<bool> {
                self.$inner.run_exists(run).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [delete_run $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn delete_run(&self, run: &$crate::__core::domain::RunKey) -> $crate::__core::error::Result<u64> {
                self.$inner.delete_run(run).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [delete_checkpoints $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn delete_checkpoints(
                &self,
                run: &$crate::__core::domain::RunKey,
                epoch: Option<$crate::__core::domain::Epoch>,
                steps: &[$crate::__core::domain::Step],
            ) -> $crate::__core::error::Result<$crate::store::DeletedCheckpoints> {
                self.$inner.delete_checkpoints(run, epoch, steps).await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [ping $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn ping(&self) -> $crate::__core::error::Result<()> {
                self.$inner.ping().await
            }
        ]);
    };
    (@build $wrapper:ty, $inner:ident, [latest_head $($rest:ident)*], [$($methods:tt)*]) => {
        $crate::wrap_checkpoint_store!(@build $wrapper, $inner, [$($rest)*], [$($methods)*
            async fn latest_head(
                &self,
                run: &$crate::__core::domain::RunKey,
            ) -> $crate::__core::error::Result<Option<$crate::store::LatestHead>> {
                self.$inner.latest_head(run).await
            }
        ]);
    };
}
