//! The `CheckpointStore` behaviour suite, written once and run against every backend and
//! wrapper: memory here, SQLite and Postgres from their crates' tests, the instrumented
//! wrapper and the Redis cache from the server's.
//!
//! Each behaviour is an async function over a [`TestBackend`]; [`store_behaviours!`] lists them
//! all, and each backend instantiates that list once, so a behaviour added here runs
//! everywhere. What only one backend has (migrations, group commit, SQLSTATE mapping, damaged
//! SQL columns, reopening a file) stays in that backend's own tests.

/// Expands to one test per behaviour for the backend type given, a [`TestBackend`]; each
/// backend's crate calls it from its own tests.
#[macro_export]
macro_rules! store_behaviours {
    ($backend:ty) => {
        $crate::store_behaviours!(@tests $backend;
            writes::a_saved_checkpoint_loads_back_whole_and_verifies,
            writes::a_run_without_messages_or_tools_loads_whole,
            writes::an_identical_retry_succeeds_and_changes_nothing,
            writes::different_content_at_a_saved_step_conflicts_and_changes_nothing,
            writes::a_message_offset_that_leaves_a_gap_or_overlaps_is_refused,
            writes::a_step_not_after_the_latest_is_refused,
            writes::a_retried_tool_result_returns_the_stored_record,
            writes::concurrent_tool_results_make_a_gapless_journal,
            writes::concurrent_saves_to_many_runs_all_land_in_order,
            tool_batches::a_batch_journals_in_order_and_answers_each_entry_like_a_single_result,
            tool_batches::a_batch_is_fenced_once_and_writes_all_or_nothing,
            covered_tools::a_save_may_cover_the_journals_first_entries_and_verifies_on_load,
            covered_tools::a_save_covering_more_than_the_journal_is_refused_and_changes_nothing,
            fencing::a_stale_epoch_is_fenced_and_leaves_no_trace,
            fencing::an_epoch_never_issued_is_refused,
            fencing::rewind_is_fenced_by_epoch_and_needs_the_run,
            fencing::rewind_truncates_the_log_and_a_newer_epoch_replaces_a_step,
            fencing::a_quarantined_step_may_be_rewritten_by_the_runs_owner,
            reads::load_picks_the_latest_below_a_step_or_exactly_one,
            reads::quarantine_hides_a_checkpoint_and_keeps_its_first_reason,
            reads::a_damaged_checkpoint_reads_back_and_fails_verification,
            reads::list_pages_by_step_with_summaries,
            reads::steps_run_exists_and_delete_run_agree,
            reads::latest_head_names_the_latest_valid_checkpoint_and_the_journal,
            reads::two_tenants_with_the_same_run_id_never_see_each_others_data,
            quarantined::a_latest_load_says_whether_quarantined_checkpoints_lie_above_it,
            retention::set_retention_is_read_back_in_the_retention_facts,
            retention::pins_are_per_source_and_default_to_the_latest_valid_step,
            retention::unpin_removes_one_source_or_every_source,
            retention::retention_facts_name_every_source_pinning_a_step_in_one_tenant,
            retention::prune_deletes_only_unpinned_steps_below_the_latest_valid,
            retention::prune_is_fenced_by_epoch,
            retention::runs_after_pages_across_tenants_and_filters_by_policy,
            retention::checkpoints_after_pages_in_one_tenant_or_across_all,
            journal::intents_and_results_share_one_journal_that_checkpoints_cover,
            arguments::a_call_journalled_with_other_arguments_is_refused_and_changes_nothing,
            arguments::an_intent_and_its_result_must_carry_the_same_arguments,
            journal::a_repeated_intent_answers_with_what_the_call_holds,
            journal::a_tool_intent_is_fenced_by_epoch,
            journal::a_repair_rewrites_the_journal_from_a_corrupt_entry_and_records_who,
            journal::an_in_doubt_call_marked_done_gets_its_result_appended,
            journal_windows::a_journal_scope_reads_from_its_steps_first_entry_and_verifies_from_there,
            journal_windows::damage_in_a_journal_window_or_to_a_digest_it_stands_on_fails_it,
            journal_windows::damage_in_a_message_window_or_to_the_digest_at_its_offset_fails_it,
            heads::a_label_names_one_checkpoint_of_its_run,
            heads::list_runs_either_way_within_bounds_with_metadata,
            heads::a_rare_metadata_filter_fills_a_page_in_one_listing,
            heads::a_run_head_tells_where_the_run_stands,
            heads::runs_list_by_id_in_byte_order_with_a_prefix_range,
            deletes::deleting_chosen_steps_is_idempotent_and_ignores_unknown_ones,
            deletes::deleting_the_latest_makes_the_previous_one_latest_and_saves_go_on,
            deletes::pinned_checkpoints_are_kept_and_reported,
            deletes::deleting_checkpoints_is_fenced_by_an_epoch_when_one_is_given,
            window_sizes::a_window_stops_short_exactly_when_a_load_of_it_does,
        );
    };
    (@tests $backend:ty; $($group:ident :: $behaviour:ident),* $(,)?) => {
        $(
            // Multi-threaded: a Postgres schema is dropped from a blocking Drop, which must not
            // starve the connection tasks still holding its locks.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                let backend = <$backend as $crate::store::tests::TestBackend>::create().await;
                $crate::store::tests::$group::$behaviour(&backend).await;
            }
        )*
    };
}
pub mod arguments;
pub mod covered_tools;
pub mod deletes;
pub mod fencing;
pub mod heads;
pub mod journal;
pub mod journal_windows;
mod memory;
pub mod quarantined;
pub mod reads;
pub mod retention;
pub mod tool_batches;
pub mod window_sizes;
pub mod writes;

use std::sync::Arc;

pub use checkpointd_core::testing::{checkpoint, message, run, steps, texts, tool};
pub use memory::MemoryBackend;

use super::{CheckpointStore, RetentionStore, Snapshot, Which};
use checkpointd_core::domain::{RunKey, Step};

/// A state no checkpoint in the suite was saved with: what `damage_state` and
/// `damage_tool_output` write.
pub const DAMAGED_STATE: &[u8] = b"\x00";

/// A chain digest no content hashes to: what [`TestBackend::damage`] writes over a digest.
pub const DAMAGED_DIGEST: [u8; 32] = [7; 32];

/// A stored value [`TestBackend::damage`] overwrites, as a bad disk would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// The chain digest stored with tool journal entry `seq` becomes [`DAMAGED_DIGEST`].
    ToolChain(u64),
    /// The content of message `seq` (from 0) becomes [`DAMAGED_STATE`].
    MessageContent(u64),
    /// The chain digest stored with message `seq` (from 0) becomes [`DAMAGED_DIGEST`].
    MessageChain(u64),
}

/// One fresh, empty store per test, and the means to damage it behind its back. (The suites
/// run on multi-threaded runtimes and never need the futures to be `Send` by name.)
#[allow(async_fn_in_trait)]
pub trait TestBackend: Sized {
    async fn create() -> Self;

    fn store(&self) -> Arc<dyn CheckpointStore>;

    /// The same database's retention contract, reached as production reaches it: around any
    /// cache.
    fn retention(&self) -> Arc<dyn RetentionStore>;

    /// Overwrites the state of the checkpoint at `step` as a bad disk would, so that it reads
    /// back but no longer matches its checksum.
    async fn damage_state(&self, run: &RunKey, step: Step);

    /// Overwrites the output of tool journal entry `seq` as a bad disk would, so that it reads
    /// back but no longer matches its digest.
    async fn damage_tool_output(&self, run: &RunKey, seq: u64);

    /// Overwrites one stored message or chain digest as a bad disk would: it reads back, but
    /// no longer matches the content around it. Panics when the row does not exist.
    async fn damage(&self, run: &RunKey, damage: Damage);
}

/// The run's latest checkpoint that is not quarantined; panics when there is none.
pub async fn load_latest<S: CheckpointStore + ?Sized>(store: &S, run: &RunKey) -> Snapshot {
    store
        .load(run, Which::LatestBelow(None))
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("run {run} has no valid checkpoint"))
}

/// The run's checkpoint at `step`; panics when there is none.
pub async fn load_at<S: CheckpointStore + ?Sized>(store: &S, run: &RunKey, step: u64) -> Snapshot {
    store
        .load(run, Which::At(Step::new(step)))
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("run {run} has no checkpoint at step {step}"))
}
