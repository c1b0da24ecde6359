//! The `CheckpointStore` and `RetentionStore` contracts, which every backend (memory here, SQLite
//! and Postgres in their own crates) and every wrapper (the server's cache and instrumentation)
//! implements, and the memory backend.

pub mod forward;
mod memory;
#[cfg(any(test, feature = "testsuite"))]
pub mod tests;

use async_trait::async_trait;

pub use memory::MemoryStore;

use checkpointd_core::domain::{
    CheckpointSummary, Checksum, Epoch, IntentOutcome, JournalAction, JournalScope, ListQuery,
    MessageChain, MessageWindow, NewCheckpoint, NewToolIntent, NewToolResult, RunId, RunInfo,
    RunKey, SavedCheckpoint, Step, StoredCheckpoint, Tenant, ToolChain, ToolRecord, ToolWindow,
};
use checkpointd_core::error::Result;
use checkpointd_core::{plan, retention};

/// Which checkpoint [`CheckpointStore::load`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The highest-step checkpoint that is not quarantined, below the given step if any.
    LatestBelow(Option<Step>),
    /// The checkpoint at exactly this step, quarantined or not.
    At(Step),
}

/// A checkpoint with the part of the run's tool journal its load asked for, read in one
/// consistent snapshot.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub checkpoint: StoredCheckpoint,
    /// The journal entries from `tool_window.from` to the journal's end, results and intents,
    /// in journal order: the whole journal unless a narrower [`JournalScope`] was asked for.
    pub tools: Vec<ToolRecord>,
    /// Where `tools` start, with the chain digests stored around them, which verify them
    /// without the entries before ([`checkpointd_core::domain::verify_tool_window`]).
    pub tool_window: ToolWindow,
    /// Already verified by whoever produced it: the cache verifies every hit itself, because a
    /// bad cache entry must be dropped, never quarantined in the store. Backends say `false`.
    pub verified: bool,
    /// Whether the run holds a checkpoint at a higher step than this one, read in the same
    /// snapshot (an index probe, no second round trip). After a latest load every such
    /// checkpoint is quarantined, so this says whether the answer passes over any: the engine
    /// lists them only then, and a run without quarantined checkpoints pays nothing more.
    pub has_newer: bool,
}

/// What identifies the answer of `load(run, Which::LatestBelow(None))` without reading it: a
/// cached copy of that answer is current exactly when it matches this head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatestHead {
    /// The highest-step checkpoint that is not quarantined, if any.
    pub checkpoint: Option<CheckpointHead>,
    /// The run's tool journal: how many results, and the chain's value after the last.
    pub tools: ToolChain,
    /// Whether any checkpoint (then quarantined) lies above `checkpoint`, or any at all when
    /// `checkpoint` is `None`: as [`Snapshot::has_newer`] of the latest load.
    pub has_newer: bool,
}

/// The identity of one stored checkpoint: a rewrite of the step changes `id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointHead {
    pub step: Step,
    pub id: String,
    pub epoch: Epoch,
    pub checksum: Checksum,
}

/// A durable home for checkpoints, message logs and tool journals: what serving a run needs.
///
/// Every method is scoped to one tenant's run and never reads across tenants. Backends store
/// and fetch; the rules (what a Save may do, what counts as valid) live in [`plan`] and in
/// the server's checkpoint engine, so every backend keeps them identically. Retention, pins
/// and the store-wide listings of maintenance are apart, in [`RetentionStore`]: a wrapper
/// such as the cache wraps this contract alone.
#[async_trait]
pub trait CheckpointStore: Send + Sync + 'static {
    /// Stores a checkpoint, or recognises an identical retry.
    ///
    /// In one transaction that locks the run: read the [`plan::SaveContext`], call
    /// [`plan::plan_save`], and apply the plan. Returns only after the commit, so an
    /// acknowledged checkpoint survives a crash. A rejected request changes nothing.
    async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint>;

    /// Journals a tool result, or returns the stored one for a known call id (`true` then).
    ///
    /// Same shape as `save`: lock the run, read the context, [`plan::plan_tool_result`], apply.
    async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)>;

    /// Journals a batch of tool results atomically: in one transaction that locks the run, read
    /// the stored result of each call id, [`plan::plan_tool_results`], apply every insert and
    /// the new chain head, commit. All or none. Every entry carries the same run and epoch (the
    /// adapter builds them so). One answer per entry, in order, as `record_tool_result` gives;
    /// an empty batch journals nothing and answers nothing.
    async fn record_tool_results(
        &self,
        results: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>>;

    /// Journals a tool intent, or answers with what the call id already holds (its intent,
    /// its result, or both) and `already_recorded`.
    ///
    /// Same shape as `save`: lock the run, read the call's entries, [`plan::plan_tool_intent`],
    /// apply. The intent takes the journal's next `seq`; a later result for the call id is
    /// journalled beside it (a call holds at most one entry of each kind).
    async fn record_tool_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome>;

    /// Applies an operator's journal repair in one transaction that locks the run: replaces
    /// the entries from `from_seq` on, sets the tool chain head, quarantines the checkpoints
    /// whose `tool_count` reaches `quarantine_from`, and records the action. Only while the
    /// run's tool chain is still `expected`; otherwise `FailedPrecondition`. Returns the steps
    /// quarantined, ascending. `NotFound` for an unknown run.
    async fn rewrite_journal(&self, rewrite: &plan::JournalRewrite) -> Result<Vec<Step>>;

    /// Every repair recorded for the run's journal, oldest first.
    async fn journal_actions(&self, run: &RunKey) -> Result<Vec<JournalAction>>;

    /// Reads one checkpoint with the messages it covers and the run's whole tool journal.
    ///
    /// Performs no verification: the checkpoint engine verifies what it restores. `None` when no
    /// checkpoint matches.
    async fn load(&self, run: &RunKey, which: Which) -> Result<Option<Snapshot>> {
        self.load_window(run, which, MessageWindow::ALL, JournalScope::All)
            .await
    }

    /// [`Self::load`], reading only `window` of the checkpoint's messages and the part of the
    /// tool journal `journal` needs, in the same snapshot.
    ///
    /// Messages: those from the window's offset (clamped to `message_count`) for as long as
    /// [`MessageWindow::take`] takes them, with the chain digests stored around them
    /// ([`checkpointd_core::domain::WindowChains`]: `before` when the window starts past 0;
    /// `after` and `head` when it stops short of `message_count`). `messages_from` and
    /// `messages_end` say where the window starts and where it stops, whether or not rows are
    /// missing in between.
    ///
    /// Journal ([`ToolWindow`]): `All` reads every entry (`from` 1); `Step` reads the entries
    /// from the first one whose step is the checkpoint's to the journal's end (`from` is that
    /// seq, or the journal's length + 1 when the step has none), through an index on
    /// `(tenant, run, step, seq)`; `None` reads no entry (`from` is
    /// [`ToolWindow::NO_ENTRIES`]). Outside `All`, `before` is the digest stored with entry
    /// `from - 1` and `covered` the one stored with entry `tool_count`, each read by key. The
    /// engine verifies the rest.
    async fn load_window(
        &self,
        run: &RunKey,
        which: Which,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Result<Option<Snapshot>>;

    /// The step of the checkpoint `which` names when a load of `window` of it would stop short
    /// of its `message_count` (by [`MessageWindow::take`]'s rule); `None` when the window
    /// reaches the log's end or no checkpoint matches.
    ///
    /// What decides an older client's ANSWER_TOO_LARGE before anything is read or changed, so a
    /// backend answers it from stored sizes without reading message bodies. The default reads
    /// the window (no journal), which is right for any backend but costs the window.
    async fn window_stops_short(
        &self,
        run: &RunKey,
        which: Which,
        window: MessageWindow,
    ) -> Result<Option<Step>> {
        let snapshot = self
            .load_window(run, which, window, JournalScope::None)
            .await?;
        Ok(snapshot
            .filter(|snapshot| snapshot.checkpoint.continues())
            .map(|snapshot| snapshot.checkpoint.step))
    }

    /// The run's whole tool journal, results and intents, in journal order.
    async fn tools(&self, run: &RunKey) -> Result<Vec<ToolRecord>>;

    /// Every step that has a checkpoint, ascending.
    async fn steps(&self, run: &RunKey) -> Result<Vec<Step>>;

    /// Marks a checkpoint as corrupt so it is never restored. Idempotent; keeps the first reason.
    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()>;

    /// Creates the run if needed and bumps its fencing epoch; returns the new epoch.
    async fn begin_resume(&self, run: &RunKey) -> Result<Epoch>;

    /// Truncates the message log to `chain.len` messages and makes `chain` its head, provided
    /// the run is still at `epoch`; otherwise `FailedPrecondition`.
    async fn rewind(&self, run: &RunKey, epoch: Epoch, chain: MessageChain) -> Result<()>;

    /// Up to `query.limit` checkpoint summaries within the query's bounds whose metadata
    /// passes its filter ([`ListQuery::matches`]), in its order: one query, which filters as it
    /// scans, never a page per `limit` rows.
    async fn list(&self, run: &RunKey, query: &ListQuery) -> Result<Vec<CheckpointSummary>>;

    /// The step of the run's checkpoint labelled `label`; `None` when no checkpoint has it.
    async fn label_step(&self, run: &RunKey, label: &str) -> Result<Option<Step>>;

    /// The run's head, read by key without payloads; `None` when the run does not exist.
    async fn run_info(&self, run: &RunKey) -> Result<Option<RunInfo>>;

    /// Up to `limit` of the tenant's runs whose id starts with `prefix` and comes after
    /// `after`, ascending by run id compared as bytes: a keyset page over an index range.
    async fn list_runs(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>>;

    /// Whether the run exists (has been saved to, journalled into or resumed).
    async fn run_exists(&self, run: &RunKey) -> Result<bool>;

    /// Deletes a run and everything under it; returns how many checkpoints went.
    async fn delete_run(&self, run: &RunKey) -> Result<u64>;

    /// Deletes the listed checkpoints of a run now: the `DeleteCheckpoints` RPC, whose
    /// comment in checkpoint.proto is the contract.
    ///
    /// In one transaction that locks the run. `NotFound` for an unknown run. With an
    /// `epoch`, fenced as Save is (`StaleEpoch`, `EpochNotIssued`) and nothing is deleted.
    /// Every listed step that holds a checkpoint goes, quarantined or not and the latest
    /// included, with its label; a step that any source pins is kept and reported instead; a
    /// step without a checkpoint is ignored, so a retry is harmless. The message log, the tool
    /// journal and the run row's heads are not touched, but the run's version (`updated_at`)
    /// moves when anything went, so a cached guess of the run's latest step is dropped.
    async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints>;

    /// Checks that the backing database answers.
    async fn ping(&self) -> Result<()>;

    /// The run's [`LatestHead`], read in one snapshot by primary key and without payloads;
    /// `None` when the run does not exist. Far cheaper than `load`, which is the point.
    async fn latest_head(&self, run: &RunKey) -> Result<Option<LatestHead>>;
}

/// Retention and maintenance: policies, pins, pruning and the store-wide keyset listings the
/// pruner and the scrub page through.
///
/// Every backend implements it beside [`CheckpointStore`], on the same database. None of it
/// can make a cached latest checkpoint wrong: `prune` never removes a run's highest
/// non-quarantined checkpoint and the rest only reads or marks, so callers reach it on the
/// backend itself, around any cache (a run is deleted through [`CheckpointStore::delete_run`],
/// which the cache sees).
#[async_trait]
pub trait RetentionStore: Send + Sync + 'static {
    /// Sets the run's retention policy (`None`: the server default), creating the run if needed.
    /// The policy is stored as its text form ([`retention::RetentionPolicy`]'s `Display`).
    async fn set_retention(&self, run: &RunKey, policy: Option<&str>) -> Result<()>;

    /// Pins a checkpoint for `source` (e.g. `operator`, `approval:TASK`) so that no retention
    /// policy prunes it; idempotent. `step: None` pins the run's highest non-quarantined
    /// checkpoint. Returns the pinned step, `None` when there was nothing to pin;
    /// `NotFound` when `step` names no checkpoint.
    async fn pin(&self, run: &RunKey, step: Option<Step>, source: &str) -> Result<Option<Step>>;

    /// Removes `source`'s pin from one step, or from every step when `step` is `None`; returns
    /// how many pins went. Other sources' pins stay; `source: None` removes every source's.
    async fn unpin(&self, run: &RunKey, step: Option<Step>, source: Option<&str>) -> Result<u64>;

    /// What retention needs about a run, read in one snapshot: its epoch, its own policy and
    /// every checkpoint (ascending, with whether any source pins it). `None` for no such run.
    async fn retention_facts(&self, run: &RunKey) -> Result<Option<RetentionFacts>>;

    /// Up to `limit` runs after `after` in `(tenant, run_id)` order, across every tenant; only
    /// runs that set their own retention policy when `with_policy_only`.
    ///
    /// The one store-wide listing, for the pruner: it returns keys only, and everything done
    /// with a key is scoped to that one run.
    async fn runs_after(
        &self,
        after: Option<&RunKey>,
        limit: usize,
        with_policy_only: bool,
    ) -> Result<Vec<RunKey>>;

    /// Deletes the listed checkpoints of a run in one short transaction that locks the run.
    ///
    /// Fenced: when the run's epoch is no longer `epoch` (a Resume began since the pruner read
    /// its facts) nothing is deleted and the answer is `FailedPrecondition`. Never deletes a
    /// step pinned at the time of the delete, nor the run's highest non-quarantined step or any
    /// above it, whatever the list says. Messages and tool results are not touched: every
    /// remaining checkpoint covers a prefix of the same log and journal, the latest one (which
    /// is never pruned) covers the longest message log, and the journal is never cut (a Save's
    /// `tool_count` may cover fewer entries than an earlier checkpoint did). Returns how many
    /// checkpoints went.
    async fn prune(&self, run: &RunKey, epoch: Epoch, steps: &[Step]) -> Result<u64>;

    /// Up to `limit` checkpoint addresses after `after` in `(tenant, run_id, step)` order, in
    /// one tenant or (`None`) across every tenant: a keyset page for the scrub.
    async fn checkpoints_after(
        &self,
        tenant: Option<&Tenant>,
        after: Option<&CheckpointRef>,
        limit: usize,
    ) -> Result<Vec<CheckpointRef>>;
}

/// What [`CheckpointStore::delete_checkpoints`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeletedCheckpoints {
    /// How many checkpoints went.
    pub deleted: u64,
    /// The listed steps kept because a source pins them, ascending and distinct.
    pub pinned: Vec<Step>,
}

/// What [`RetentionStore::retention_facts`] returns.
#[derive(Clone, Debug)]
pub struct RetentionFacts {
    pub epoch: Epoch,
    /// The run's own policy, as stored; `None` means the server default.
    pub policy: Option<String>,
    /// Every checkpoint of the run, ascending.
    pub checkpoints: Vec<retention::CheckpointFacts>,
}

/// Where one checkpoint lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointRef {
    pub run: RunKey,
    pub step: Step,
}

/// Backend settings that come from configuration.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Connections in the Postgres pool.
    pub pool_size: usize,
    /// How Postgres statements are sent: see [`PostgresStatements`].
    pub statements: PostgresStatements,
    /// A direct (session) URL for the Postgres key-change `LISTEN`, for when `--database`
    /// goes through a transaction pooler, which cannot hold a `LISTEN`.
    pub listen_url: Option<String>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            statements: PostgresStatements::default(),
            listen_url: None,
        }
    }
}

/// How the Postgres store sends its statements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PostgresStatements {
    /// Named statements, prepared once per connection and reused: the fastest, and right for a
    /// direct connection or a session-mode pooler.
    #[default]
    Prepared,
    /// Unnamed statements (parse, bind and execute in one round trip), none outliving its
    /// transaction: for a transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor), which
    /// hands each transaction whichever server connection is free.
    Unnamed,
}

impl std::str::FromStr for PostgresStatements {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        match raw {
            "prepared" => Ok(Self::Prepared),
            "unnamed" => Ok(Self::Unnamed),
            other => Err(format!(
                "invalid postgres statements {other:?}: use prepared or unnamed"
            )),
        }
    }
}
