//! In-memory store for tests and throwaway runs: same contracts, nothing survives a restart.
//! The checkpoint store is here; `journal`, `listing` and `retention` hold the rest.

mod journal;
mod listing;
mod retention;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use async_trait::async_trait;

use crate::notifications::MemoryNotifications;

use super::{CheckpointHead, CheckpointStore, DeletedCheckpoints, LatestHead, Snapshot, Which};
use checkpointd_core::domain::{
    CallId, CheckpointSummary, Checksum, Digest32, Epoch, IntentOutcome, JournalAction,
    JournalScope, ListQuery, Message, MessageChain, MessageWindow, NewCheckpoint, NewToolIntent,
    NewToolResult, Quarantine, RunId, RunInfo, RunKey, SavedCheckpoint, Step, StoredCheckpoint,
    Tenant, ToolRecord, WindowChains,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::notify::quarantine_event;
use checkpointd_core::plan::{
    self, ExistingCheckpoint, PrefixSource, RunHead, SaveContext, SavePlan, StoredCall, ToolPlan,
};

#[derive(Clone, Debug)]
struct CheckpointRow {
    id: String,
    epoch: Epoch,
    content_type: String,
    state: Vec<u8>,
    metadata: BTreeMap<String, String>,
    message_count: u64,
    tool_count: u64,
    checksum: Checksum,
    created_at: SystemTime,
    quarantine: Option<Quarantine>,
    label: Option<String>,
}

#[derive(Debug)]
struct RunData {
    head: RunHead,
    /// When the run last changed: a save, a journal entry, a resume.
    updated_at: SystemTime,
    checkpoints: BTreeMap<Step, CheckpointRow>,
    messages: Vec<(Message, Digest32)>,
    tools: Vec<ToolRecord>,
    /// Every repair an operator made to the journal, oldest first.
    actions: Vec<JournalAction>,
    retention: Option<String>,
    /// (step, source) of every pin.
    pins: BTreeSet<(Step, String)>,
}

impl RunData {
    fn new() -> Self {
        Self {
            head: RunHead::NEW,
            updated_at: SystemTime::now(),
            checkpoints: BTreeMap::new(),
            messages: Vec::new(),
            tools: Vec::new(),
            actions: Vec::new(),
            retention: None,
            pins: BTreeSet::new(),
        }
    }

    fn pinned(&self, step: Step) -> bool {
        !self.pinned_by(step).is_empty()
    }

    /// The sources pinning `step`, sorted.
    fn pinned_by(&self, step: Step) -> Vec<String> {
        self.pins
            .range((step, String::new())..)
            .take_while(|(at, _)| *at == step)
            .map(|(_, source)| source.clone())
            .collect()
    }

    /// The checkpoint `which` names.
    fn find(&self, which: Which) -> Option<(Step, &CheckpointRow)> {
        match which {
            Which::LatestBelow(below) => self.latest_valid(below),
            Which::At(step) => self.checkpoints.get(&step).map(|row| (step, row)),
        }
    }

    fn latest_valid(&self, below: Option<Step>) -> Option<(Step, &CheckpointRow)> {
        self.checkpoints
            .iter()
            .rev()
            .filter(|(step, _)| below.is_none_or(|below| **step < below))
            .find(|(_, row)| row.quarantine.is_none())
            .map(|(step, row)| (*step, row))
    }

    /// What the journal holds for `call_id`.
    fn call(&self, call_id: &CallId) -> StoredCall {
        StoredCall::of(
            self.tools
                .iter()
                .filter(|record| &record.call_id == call_id)
                .cloned(),
        )
    }

    /// Whether a checkpoint lies above `step` (any at all for `None`).
    fn newer_than(&self, step: Option<Step>) -> bool {
        match step {
            Some(step) => self
                .checkpoints
                .range((Bound::Excluded(step), Bound::Unbounded))
                .next()
                .is_some(),
            None => !self.checkpoints.is_empty(),
        }
    }

    /// Where `window` of `row`'s log starts, how many messages it takes and where it stops.
    fn window_bounds(&self, row: &CheckpointRow, window: MessageWindow) -> (usize, usize, usize) {
        let count = usize::try_from(row.message_count).unwrap_or(usize::MAX);
        let held = &self.messages[..count.min(self.messages.len())];
        let from = usize::try_from(window.offset)
            .unwrap_or(usize::MAX)
            .min(count);
        let rest = held.get(from..).unwrap_or_default();
        let taken = window.take(rest.iter().map(|(message, _)| message.content.len()));
        // A window cut short stops before the first message it did not take; one that ran out
        // of rows stops at the log's end, which verification then finds short.
        let end = if taken < rest.len() {
            from + taken
        } else {
            count
        };
        (from, taken, end)
    }

    fn snapshot(
        &self,
        run: &RunKey,
        step: Step,
        row: &CheckpointRow,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Snapshot {
        let count = usize::try_from(row.message_count).unwrap_or(usize::MAX);
        let held = &self.messages[..count.min(self.messages.len())];
        let (from, taken, end) = self.window_bounds(row, window);
        let rest = held.get(from..).unwrap_or_default();
        let stored_at = |seq: usize| held.get(seq).map(|(_, chain)| *chain);
        let chains = WindowChains {
            before: from.checked_sub(1).and_then(stored_at),
            after: (end < count)
                .then(|| end.checked_sub(1).and_then(stored_at))
                .flatten(),
            head: (end < count)
                .then(|| count.checked_sub(1).and_then(stored_at))
                .flatten(),
        };
        let (tools, tool_window) = self.journal_window(journal, step, row.tool_count);
        Snapshot {
            checkpoint: StoredCheckpoint {
                id: row.id.clone(),
                run_id: run.run_id.clone(),
                step,
                epoch: row.epoch,
                content_type: row.content_type.clone(),
                state: row.state.clone(),
                metadata: row.metadata.clone(),
                messages: rest[..taken]
                    .iter()
                    .map(|(message, _)| message.clone())
                    .collect(),
                messages_from: from as u64,
                messages_end: end as u64,
                chains,
                message_count: row.message_count,
                tool_count: row.tool_count,
                checksum: row.checksum,
                created_at: row.created_at,
                quarantine: row.quarantine.clone(),
                label: row.label.clone(),
            },
            tools,
            tool_window,
            verified: false,
            has_newer: self.newer_than(Some(step)),
        }
    }
}

/// Keeps every run in a map behind one mutex; each call is atomic.
#[derive(Debug, Default)]
pub struct MemoryStore {
    runs: Mutex<HashMap<RunKey, RunData>>,
    /// Where a first quarantine records its `integrity.corrupt` event, under the runs' lock.
    outbox: Arc<MemoryNotifications>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store whose quarantines record their events in `outbox`: the memory queue's, so that
    /// both write one outbox as the SQL backends' share one database.
    pub fn with_outbox(outbox: Arc<MemoryNotifications>) -> Self {
        Self {
            runs: Mutex::default(),
            outbox,
        }
    }

    /// Replaces a stored checkpoint's state behind the store's back, as a bad disk would.
    #[cfg(any(test, feature = "testsuite"))]
    pub fn overwrite_state(&self, run: &RunKey, step: Step, state: &[u8]) {
        self.with_runs(|runs| {
            let row = runs
                .get_mut(run)
                .and_then(|data| data.checkpoints.get_mut(&step))
                .unwrap_or_else(|| panic!("no checkpoint at step {step} to overwrite"));
            row.state = state.to_vec();
        });
    }

    /// Changes message `seq` (from 0) or the chain digest stored with it, as a bad disk would.
    pub fn overwrite_message(
        &self,
        run: &RunKey,
        seq: u64,
        change: impl FnOnce(&mut Message, &mut Digest32),
    ) {
        self.with_runs(|runs| {
            let (message, chain) = runs
                .get_mut(run)
                .and_then(|data| data.messages.get_mut(usize::try_from(seq).ok()?))
                .unwrap_or_else(|| panic!("no message {seq} to overwrite"));
            change(message, chain);
        });
    }

    fn with_runs<T>(&self, f: impl FnOnce(&mut HashMap<RunKey, RunData>) -> T) -> T {
        // A poisoned lock means a panic mid-update elsewhere; the map is still structurally
        // sound, and every update below is planned before it mutates anything.
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut runs)
    }
}

#[async_trait]
impl CheckpointStore for MemoryStore {
    async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> {
        self.with_runs(|runs| {
            let empty = RunData::new();
            let run = runs.get(&checkpoint.run).unwrap_or(&empty);
            let prefix = match SaveContext::prefix_source(&run.head, checkpoint.message_offset) {
                PrefixSource::Head => Some(run.head.messages.head),
                PrefixSource::Empty => Some([0; 32]),
                PrefixSource::Gap => None,
                PrefixSource::StoredAt(seq) => run.messages.get(seq as usize).map(|(_, d)| *d),
            };
            let context = SaveContext {
                head: run.head,
                existing: run
                    .checkpoints
                    .get(&checkpoint.step)
                    .map(|row| ExistingCheckpoint {
                        id: row.id.clone(),
                        epoch: row.epoch,
                        checksum: row.checksum,
                        created_at: row.created_at,
                        quarantined: row.quarantine.is_some(),
                        label: row.label.clone(),
                    }),
                latest_step: run.latest_valid(None).map(|(step, _)| step),
                prefix,
                label_step: checkpoint.label.as_ref().and_then(|label| {
                    run.checkpoints
                        .iter()
                        .find(|(_, row)| row.label.as_ref() == Some(label))
                        .map(|(step, _)| *step)
                }),
                tools: SaveContext::covered_tools(&run.head, checkpoint.tool_count, |seq| {
                    Ok(run
                        .tools
                        .iter()
                        .find(|record| record.seq == seq)
                        .map(|record| record.chain))
                })?,
            };
            match plan::plan_save(checkpoint, &context)? {
                SavePlan::Unchanged(saved) => Ok(saved),
                SavePlan::Write {
                    id,
                    checksum,
                    replace: _,
                    rows,
                    head,
                    message_count,
                    tool_count,
                } => {
                    let created_at = SystemTime::now();
                    let run = runs
                        .entry(checkpoint.run.clone())
                        .or_insert_with(RunData::new);
                    run.messages
                        .extend(rows.into_iter().map(|row| (row.message, row.chain)));
                    run.head = head;
                    run.updated_at = created_at;
                    run.checkpoints.insert(
                        checkpoint.step,
                        CheckpointRow {
                            id: id.clone(),
                            epoch: checkpoint.epoch,
                            content_type: checkpoint.content_type.clone(),
                            state: checkpoint.state.clone(),
                            metadata: checkpoint.metadata.clone(),
                            message_count,
                            tool_count,
                            checksum,
                            created_at,
                            quarantine: None,
                            label: checkpoint.label.clone(),
                        },
                    );
                    Ok(SavedCheckpoint {
                        id,
                        checksum,
                        created_at,
                        already_existed: false,
                        tool_count,
                    })
                }
            }
        })
    }

    async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)> {
        self.with_runs(|runs| {
            let empty = RunData::new();
            let run = runs.get(&result.run).unwrap_or(&empty);
            match plan::plan_tool_result(result, &run.head, run.call(&result.call_id))? {
                ToolPlan::Existing(record) => Ok((record, true)),
                ToolPlan::Insert(record, tools) => {
                    // The run is created only once the request is accepted.
                    let run = runs.entry(result.run.clone()).or_insert_with(RunData::new);
                    run.tools.push(record.clone());
                    run.head.tools = tools;
                    run.updated_at = record.recorded_at;
                    Ok((record, false))
                }
            }
        })
    }

    async fn record_tool_results(
        &self,
        results: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>> {
        let Some(first) = results.first() else {
            return Ok(Vec::new());
        };
        self.with_runs(|runs| {
            let empty = RunData::new();
            let run = runs.get(&first.run).unwrap_or(&empty);
            let existing = results
                .iter()
                .map(|result| run.call(&result.call_id))
                .collect();
            let plan = plan::plan_tool_results(results, &run.head, existing)?;
            if let Some(tools) = plan.tools {
                // The run is created only once the batch is accepted.
                let run = runs.entry(first.run.clone()).or_insert_with(RunData::new);
                run.updated_at = plan
                    .inserts
                    .last()
                    .map_or(run.updated_at, |r| r.recorded_at);
                run.tools.extend(plan.inserts);
                run.head.tools = tools;
            }
            Ok(plan.answers)
        })
    }

    async fn record_tool_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome> {
        self.journal_intent(intent)
    }

    async fn rewrite_journal(&self, rewrite: &plan::JournalRewrite) -> Result<Vec<Step>> {
        self.journal_rewrite(rewrite)
    }

    async fn journal_actions(&self, run: &RunKey) -> Result<Vec<JournalAction>> {
        self.journal_actions_of(run)
    }

    async fn load_window(
        &self,
        run: &RunKey,
        which: Which,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Result<Option<Snapshot>> {
        self.with_runs(|runs| {
            let Some(data) = runs.get(run) else {
                return Ok(None);
            };
            let found = data.find(which);
            Ok(found.map(|(step, row)| data.snapshot(run, step, row, window, journal)))
        })
    }

    async fn window_stops_short(
        &self,
        run: &RunKey,
        which: Which,
        window: MessageWindow,
    ) -> Result<Option<Step>> {
        self.with_runs(|runs| {
            let Some(data) = runs.get(run) else {
                return Ok(None);
            };
            let found = data.find(which);
            Ok(found.and_then(|(step, row)| {
                let (_, _, end) = data.window_bounds(row, window);
                (end < usize::try_from(row.message_count).unwrap_or(usize::MAX)).then_some(step)
            }))
        })
    }

    async fn tools(&self, run: &RunKey) -> Result<Vec<ToolRecord>> {
        self.with_runs(|runs| {
            Ok(runs
                .get(run)
                .map(|data| data.tools.clone())
                .unwrap_or_default())
        })
    }

    async fn steps(&self, run: &RunKey) -> Result<Vec<Step>> {
        self.with_runs(|runs| {
            Ok(runs
                .get(run)
                .map(|data| data.checkpoints.keys().copied().collect())
                .unwrap_or_default())
        })
    }

    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()> {
        self.with_runs(|runs| {
            if let Some(row) = runs
                .get_mut(run)
                .and_then(|data| data.checkpoints.get_mut(&step))
                && row.quarantine.is_none()
            {
                let now = SystemTime::now();
                row.quarantine = Some(Quarantine::new(reason, now));
                self.outbox
                    .record(&quarantine_event(run, step, reason, now));
            }
            Ok(())
        })
    }

    async fn begin_resume(&self, run: &RunKey) -> Result<Epoch> {
        self.with_runs(|runs| {
            let data = runs.entry(run.clone()).or_insert_with(RunData::new);
            data.head.epoch = data.head.epoch.next();
            data.updated_at = SystemTime::now();
            Ok(data.head.epoch)
        })
    }

    async fn rewind(&self, run: &RunKey, epoch: Epoch, chain: MessageChain) -> Result<()> {
        self.with_runs(|runs| {
            let data = runs
                .get_mut(run)
                .ok_or_else(|| Error::run_not_found(&run.run_id))?;
            epoch.check_write(data.head.epoch)?;
            data.messages.truncate(chain.len as usize);
            data.head.messages = chain;
            data.updated_at = SystemTime::now();
            Ok(())
        })
    }

    async fn list(&self, run: &RunKey, query: &ListQuery) -> Result<Vec<CheckpointSummary>> {
        self.list_of(run, query)
    }

    async fn label_step(&self, run: &RunKey, label: &str) -> Result<Option<Step>> {
        self.label_step_of(run, label)
    }

    async fn run_info(&self, run: &RunKey) -> Result<Option<RunInfo>> {
        self.run_info_of(run)
    }

    async fn list_runs(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>> {
        self.list_runs_of(tenant, prefix, after, limit)
    }

    async fn run_exists(&self, run: &RunKey) -> Result<bool> {
        self.with_runs(|runs| Ok(runs.contains_key(run)))
    }

    async fn delete_run(&self, run: &RunKey) -> Result<u64> {
        self.with_runs(|runs| match runs.remove(run) {
            Some(data) => Ok(data.checkpoints.len() as u64),
            None => Err(Error::run_not_found(&run.run_id)),
        })
    }

    async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints> {
        self.with_runs(|runs| {
            let data = runs
                .get_mut(run)
                .ok_or_else(|| Error::run_not_found(&run.run_id))?;
            if let Some(epoch) = epoch {
                epoch.check_write(data.head.epoch)?;
            }
            let mut outcome = DeletedCheckpoints::default();
            for step in steps.iter().copied().collect::<BTreeSet<_>>() {
                if !data.checkpoints.contains_key(&step) {
                    continue;
                }
                if data.pinned(step) {
                    outcome.pinned.push(step);
                } else if data.checkpoints.remove(&step).is_some() {
                    outcome.deleted += 1;
                }
            }
            if outcome.deleted > 0 {
                data.updated_at = SystemTime::now();
            }
            Ok(outcome)
        })
    }

    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    async fn latest_head(&self, run: &RunKey) -> Result<Option<LatestHead>> {
        self.with_runs(|runs| {
            Ok(runs.get(run).map(|data| LatestHead {
                checkpoint: data.latest_valid(None).map(|(step, row)| CheckpointHead {
                    step,
                    id: row.id.clone(),
                    epoch: row.epoch,
                    checksum: row.checksum,
                }),
                tools: data.head.tools,
                has_newer: data.newer_than(data.latest_valid(None).map(|(step, _)| step)),
            }))
        })
    }
}

fn no_checkpoint(run: &RunKey, step: Step) -> Error {
    Error::checkpoint_not_found(&run.run_id, step.get())
}
