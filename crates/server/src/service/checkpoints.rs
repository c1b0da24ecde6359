//! The checkpoint engine: verification, fallback past corrupt checkpoints, and recovery, on top
//! of any [`CheckpointStore`]. Every checkpoint RPC and the maintenance jobs go through it; no
//! caller reaches the store around it.

use std::sync::Arc;

use std::collections::BTreeMap;

use checkpointd_core::domain::{
    CheckpointSummary, Checksum, Digest32, JournalDiagnosis, JournalScope, ListQuery, LoadOptions,
    MessageChain, MessageWindow, NewCheckpoint, NewToolResult, PageSize, PassedOver, Restored,
    RunId, RunInfo, RunKey, SavedCheckpoint, Step, StoredCheckpoint, Tenant, ToolRecord, Verdict,
    WindowChains, covered_chain, verify_tool_journal, verify_tool_window,
};
use checkpointd_core::error::{Error, Missing, Result};
use checkpointd_storage::store::{CheckpointStore, Snapshot, Which};

/// Message bytes Validate and scrub read at a time: a whole log is verified window by window,
/// never held at once.
const VERIFY_WINDOW_BYTES: usize = 4 * 1024 * 1024;

/// Everything the RPCs do, independent of gRPC.
#[derive(Clone)]
pub struct Engine {
    pub(super) store: Arc<dyn CheckpointStore>,
}

/// What a read does with a tool journal that fails verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DamagedJournal {
    /// Fail with DATA_LOSS: a plain read must not drop a result a tool depends on.
    Refuse,
    /// Restore the newest checkpoint that does not cover the first corrupt entry: Resume
    /// reports the corrupt calls as in doubt instead.
    FallBack,
}

impl Engine {
    pub fn new(store: Arc<dyn CheckpointStore>) -> Self {
        Self { store }
    }

    /// Checks that the store answers: what health reports.
    pub async fn ping(&self) -> Result<()> {
        self.store.ping().await
    }

    pub async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> {
        self.store.save(checkpoint).await
    }

    pub async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)> {
        self.store.record_tool_result(result).await
    }

    pub async fn record_tool_results(
        &self,
        results: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>> {
        self.store.record_tool_results(results).await
    }

    /// The latest checkpoint that verifies; corrupt ones on the way are quarantined.
    pub async fn load_latest(&self, run: &RunKey) -> Result<Restored> {
        self.load_latest_with(run, LoadOptions::default()).await
    }

    /// [`Self::load_latest`], trimmed to what `options` ask for after verification.
    pub async fn load_latest_with(&self, run: &RunKey, options: LoadOptions) -> Result<Restored> {
        Ok(self
            .load_latest_verified(run, options.window(), options.journal)
            .await?
            .trimmed(options))
    }

    async fn load_latest_verified(
        &self,
        run: &RunKey,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Result<Restored> {
        let (found, mut skipped_steps) = self
            .latest_valid(run, DamagedJournal::Refuse, window, journal)
            .await?;
        if found.is_none() && skipped_steps.is_empty() {
            // Only here, off the hot path: tell "no checkpoints" from "all quarantined earlier".
            skipped_steps = PassedOver::steps(&self.quarantined_above(run, None).await?);
        }
        match found {
            Some(snapshot) => {
                // The load said, in its own statement, whether anything lies above the answer
                // (all of it quarantined): only then are they listed, so a run without
                // quarantined checkpoints costs no second round trip.
                let passed_over = if snapshot.has_newer {
                    self.quarantined_above(run, Some(snapshot.checkpoint.step))
                        .await?
                } else {
                    Vec::new()
                };
                Ok(Restored {
                    checkpoint: snapshot.checkpoint,
                    tool_results: snapshot.tools,
                    skipped_steps,
                    passed_over,
                })
            }
            None if skipped_steps.is_empty() => Err(Error::no_checkpoints(&run.run_id)),
            None => Err(Error::AllCheckpointsCorrupt(format!(
                "every checkpoint of run {} is corrupt ({} quarantined)",
                run.run_id,
                skipped_steps.len()
            ))),
        }
    }

    /// The checkpoint at one step, verified, trimmed to what `options` ask for.
    pub async fn load_at_step_with(
        &self,
        run: &RunKey,
        step: Step,
        options: LoadOptions,
    ) -> Result<Restored> {
        Ok(self
            .load_window_at(run, step, options.window(), options.journal)
            .await?
            .trimmed(options))
    }

    /// The checkpoint carrying `label`, verified, trimmed to what `options` ask for.
    pub async fn load_labelled(
        &self,
        run: &RunKey,
        label: &str,
        options: LoadOptions,
    ) -> Result<Restored> {
        let step = self.store.label_step(run, label).await?.ok_or_else(|| {
            Error::NotFound(Missing::CheckpointLabelled {
                run_id: run.run_id.to_string(),
                label: label.to_owned(),
            })
        })?;
        self.load_at_step_with(run, step, options).await
    }

    /// The checkpoint at one step, verified.
    pub async fn load_at_step(&self, run: &RunKey, step: Step) -> Result<Restored> {
        self.load_window_at(run, step, MessageWindow::ALL, JournalScope::All)
            .await
    }

    /// The next page of a checkpoint's messages after `page`, verified: the same checkpoint
    /// (id and checksum) whose log still holds, before the page, the digest the previous page
    /// ended on. Anything else is [`Error::CheckpointChanged`]: the caller starts again.
    pub async fn load_next_page(
        &self,
        run: &RunKey,
        page: &NextPage,
        max_message_bytes: usize,
    ) -> Result<Restored> {
        let changed = || {
            Error::CheckpointChanged(format!(
                "checkpoint {} of run {} changed since its first page; load it again",
                page.step, run.run_id
            ))
        };
        let window = MessageWindow::new(page.offset, max_message_bytes);
        // A page carries only messages: no journal entry is read for it.
        let Some(snapshot) = self
            .store
            .load_window(run, Which::At(page.step), window, JournalScope::None)
            .await?
        else {
            return Err(changed());
        };
        let checkpoint = &snapshot.checkpoint;
        if checkpoint.id != page.checkpoint_id
            || checkpoint.checksum != page.checksum
            || checkpoint.messages_from != page.offset
            || checkpoint.chains.before != Some(page.before)
        {
            return Err(changed());
        }
        self.verified_at(run, page.step, snapshot).await
    }

    async fn load_window_at(
        &self,
        run: &RunKey,
        step: Step,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Result<Restored> {
        let snapshot = self
            .store
            .load_window(run, Which::At(step), window, journal)
            .await?
            .ok_or_else(|| Error::checkpoint_not_found(&run.run_id, step.get()))?;
        self.verified_at(run, step, snapshot).await
    }

    /// `snapshot`, read at `step`, once verified; a corrupt one is quarantined.
    async fn verified_at(&self, run: &RunKey, step: Step, snapshot: Snapshot) -> Result<Restored> {
        if let Some(quarantine) = &snapshot.checkpoint.quarantine {
            return Err(Error::DataLoss(format!(
                "checkpoint at step {step} is quarantined: {}",
                quarantine.reason
            )));
        }
        verify_journal(&snapshot)?;
        if let Err(reason) = verify_checkpoint(&snapshot) {
            self.refuse_damaged_journal(run, &snapshot).await?;
            self.quarantine(run, step, &reason).await?;
            return Err(Error::DataLoss(format!(
                "checkpoint at step {step} is corrupt: {reason}"
            )));
        }
        Ok(Restored {
            checkpoint: snapshot.checkpoint,
            tool_results: snapshot.tools,
            skipped_steps: Vec::new(),
            passed_over: Vec::new(),
        })
    }

    /// Verifies one checkpoint or all of a run's, quarantining the corrupt ones.
    pub async fn validate(&self, run: &RunKey, step: Option<Step>) -> Result<Vec<Verdict>> {
        let steps = match step {
            Some(step) => vec![step],
            None => self.store.steps(run).await?,
        };
        if steps.is_empty() {
            return Err(Error::no_checkpoints(&run.run_id));
        }
        let mut verdicts = Vec::with_capacity(steps.len());
        for step in steps {
            let verdict = self
                .verify_step(run, step)
                .await?
                .ok_or_else(|| Error::checkpoint_not_found(&run.run_id, step.get()))?;
            verdicts.push(verdict);
        }
        Ok(verdicts)
    }

    /// Verifies one checkpoint, quarantining it when corrupt; `None` when it does not exist
    /// (any more: the pruner may have removed it since it was listed).
    pub async fn verify_step(&self, run: &RunKey, step: Step) -> Result<Option<Verdict>> {
        let Some((snapshot, outcome)) = self.verify_whole(run, step).await? else {
            return Ok(None);
        };
        let checkpoint = &snapshot.checkpoint;
        let was_quarantined = checkpoint.quarantine.is_some();
        if let Err(reason) = &outcome
            && !was_quarantined
        {
            self.quarantine(run, step, reason).await?;
        }
        let reason = match (&outcome, &checkpoint.quarantine) {
            (Err(reason), _) => reason.clone(),
            (Ok(()), Some(quarantine)) => format!("quarantined earlier: {}", quarantine.reason),
            (Ok(()), None) => String::new(),
        };
        Ok(Some(Verdict {
            step,
            valid: outcome.is_ok(),
            reason,
            stored_checksum: checkpoint.checksum,
            quarantined: was_quarantined || outcome.is_err(),
        }))
    }

    /// Reads the checkpoint at `step` a window at a time ([`VERIFY_WINDOW_BYTES`]) and verifies
    /// it against a chain recomputed over the whole log, trusting no stored digest: what
    /// Validate and scrub do, in bounded memory however long the history. The snapshot is the
    /// first window's, for the checkpoint's own fields.
    async fn verify_whole(
        &self,
        run: &RunKey,
        step: Step,
    ) -> Result<Option<(Snapshot, std::result::Result<(), String>)>> {
        let first = MessageWindow::new(0, VERIFY_WINDOW_BYTES);
        let Some(snapshot) = self
            .store
            .load_window(run, Which::At(step), first, JournalScope::All)
            .await?
        else {
            return Ok(None);
        };
        let checkpoint = &snapshot.checkpoint;
        let mut later;
        let mut window = checkpoint;
        // The chain recomputed so far stands before each window, never the stored digest.
        let mut recomputed = MessageChain::EMPTY;
        let chain = loop {
            let chains = WindowChains {
                before: Some(recomputed.head),
                ..window.chains
            };
            let covered = covered_chain(
                &window.messages,
                window.messages_from,
                window.messages_end,
                window.message_count,
                &chains,
            );
            let covered = match covered {
                Ok(covered) => covered,
                Err(reason) => return Ok(Some((snapshot, Err(reason)))),
            };
            // A window cut short matched the digest stored at its end (which a paged load
            // would start or stop on), so that digest is the chain recomputed to there.
            match window.chains.after.filter(|_| window.continues()) {
                None => break covered,
                Some(after) => {
                    recomputed = MessageChain {
                        len: window.messages_end,
                        head: after,
                    }
                }
            }
            let next = MessageWindow::new(window.messages_end, VERIFY_WINDOW_BYTES);
            let Some(read) = self
                .store
                .load_window(run, Which::At(step), next, JournalScope::None)
                .await?
            else {
                return Ok(None);
            };
            if read.checkpoint.id != checkpoint.id
                || read.checkpoint.checksum != checkpoint.checksum
            {
                return Err(Error::CheckpointChanged(format!(
                    "checkpoint {step} of run {} changed while it was verified; verify again",
                    run.run_id
                )));
            }
            later = read.checkpoint;
            window = &later;
        };
        let outcome = match checkpoint.chains.head {
            Some(head) if head != chain.head => Err(format!(
                "the chain digest stored with message {} does not match the log",
                checkpoint.message_count - 1
            )),
            _ => checkpoint
                .recomputed_tools(&snapshot.tools)
                .and_then(|tools| checkpoint.verify_with(&chain, &tools)),
        };
        Ok(Some((snapshot, outcome)))
    }

    /// The newest checkpoint that verifies (corrupt ones above it are quarantined on the way),
    /// with the run's verified tool journal; `None` when no checkpoint verifies.
    pub async fn verified_latest(&self, run: &RunKey) -> Result<Option<Snapshot>> {
        Ok(self
            .latest_valid(
                run,
                DamagedJournal::Refuse,
                MessageWindow::ALL,
                JournalScope::All,
            )
            .await?
            .0)
    }

    /// One page of a run's checkpoints in the request's order and bounds, keeping only those
    /// whose metadata holds every entry of the filter; and the step to continue after when
    /// the page came back full.
    ///
    /// The store applies the filter as it scans, in one query, so a page is full whenever
    /// enough checkpoints match, however many do not.
    pub async fn list(
        &self,
        run: &RunKey,
        request: &ListRequest,
    ) -> Result<(Vec<CheckpointSummary>, Option<Step>)> {
        let limit = request.page_size.get();
        let mut query = ListQuery {
            above: None,
            below: request.before,
            descending: request.descending,
            limit,
            metadata: request.metadata.clone(),
        };
        match (request.after, request.descending) {
            (Some(after), false) => query.above = Some(after),
            (Some(after), true) => {
                query.below = Some(query.below.map_or(after, |below| below.min(after)));
            }
            (None, _) => {}
        }
        let page = self.store.list(run, &query).await?;
        if page.is_empty() && request.after.is_none() && !self.store.run_exists(run).await? {
            return Err(Error::run_not_found(&run.run_id));
        }
        let next = (page.len() == limit).then(|| page[page.len() - 1].step);
        Ok((page, next))
    }

    /// The run's head, without payloads and without fencing anyone.
    pub async fn run_info(&self, run: &RunKey) -> Result<RunInfo> {
        self.store
            .run_info(run)
            .await?
            .ok_or_else(|| Error::run_not_found(&run.run_id))
    }

    /// One page of the tenant's runs whose id starts with `prefix`, after `after`; and the run
    /// id to continue after when the page came back full.
    pub async fn list_runs(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        page_size: PageSize,
    ) -> Result<(Vec<RunInfo>, Option<RunId>)> {
        let limit = page_size.get();
        let page = self.store.list_runs(tenant, prefix, after, limit).await?;
        let next = (page.len() == limit).then(|| page[page.len() - 1].run_id.clone());
        Ok((page, next))
    }

    pub async fn delete_run(&self, run: &RunKey) -> Result<u64> {
        self.store.delete_run(run).await
    }

    /// The newest checkpoint that verifies, and the steps found corrupt on the way (now
    /// quarantined), newest first.
    pub(super) async fn latest_valid(
        &self,
        run: &RunKey,
        damaged_journal: DamagedJournal,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Result<(Option<Snapshot>, Vec<Step>)> {
        let mut skipped = Vec::new();
        let mut below = None;
        while let Some(snapshot) = self
            .store
            .load_window(run, Which::LatestBelow(below), window, journal)
            .await?
        {
            if snapshot.verified {
                return Ok((Some(snapshot), skipped));
            }
            let step = snapshot.checkpoint.step;
            if let Err(error) = verify_journal(&snapshot) {
                if damaged_journal == DamagedJournal::Refuse {
                    return Err(error);
                }
                let first = JournalDiagnosis::of(&snapshot.tools).first_corrupt_seq();
                if let Some(first) = first.filter(|first| snapshot.checkpoint.tool_count >= *first)
                {
                    let reason = format!("covers tool journal entry {first}, which is corrupt");
                    self.quarantine(run, step, &reason).await?;
                    skipped.push(step);
                    below = Some(step);
                    continue;
                }
            }
            match verify_checkpoint(&snapshot) {
                Ok(()) => return Ok((Some(snapshot), skipped)),
                Err(reason) => {
                    if damaged_journal == DamagedJournal::Refuse {
                        self.refuse_damaged_journal(run, &snapshot).await?;
                    }
                    self.quarantine(run, step, &reason).await?;
                    skipped.push(step);
                    below = Some(step);
                }
            }
        }
        Ok((None, skipped))
    }

    /// Every quarantined checkpoint above `restored` (all of them when `None`), newest first:
    /// those found corrupt just now and those quarantined earlier, by Validate for instance.
    pub(super) async fn quarantined_above(
        &self,
        run: &RunKey,
        restored: Option<Step>,
    ) -> Result<Vec<PassedOver>> {
        let query = ListQuery {
            descending: true,
            ..ListQuery::ascending(restored, PageSize::MAX.get())
        };
        Ok(self
            .store
            .list(run, &query)
            .await?
            .into_iter()
            .filter_map(PassedOver::of)
            .collect())
    }

    /// Before a checkpoint read with part of the journal is quarantined for a checksum
    /// mismatch: the mismatch may come from a damaged digest the window stands on (the one
    /// stored at `tool_count`, before the window), which a whole read refuses as a damaged
    /// journal instead. So the whole journal is read and verified then, off the hot path,
    /// and a damaged one is DATA_LOSS without quarantine, exactly as a whole read answers.
    async fn refuse_damaged_journal(&self, run: &RunKey, snapshot: &Snapshot) -> Result<()> {
        if snapshot.tool_window.is_whole() {
            return Ok(());
        }
        verify_tool_journal(&self.store.tools(run).await?).map_err(journal_corrupt)
    }

    async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()> {
        tracing::warn!(
            run_id = %run.run_id,
            tenant = %run.tenant,
            step = step.get(),
            reason,
            "corrupt checkpoint quarantined"
        );
        crate::telemetry::metrics::record_corrupt_skipped();
        self.store.quarantine(run, step, reason).await
    }
}

/// Where the page after an answer's messages starts, and what must still hold there: the
/// continuation a paged answer hands its client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextPage {
    pub step: Step,
    pub checkpoint_id: String,
    pub checksum: Checksum,
    /// The log position of the page's first message.
    pub offset: u64,
    /// The chain digest stored with the message before it, which the previous page was
    /// verified to end on.
    pub before: Digest32,
}

impl NextPage {
    /// The page after `checkpoint`'s verified window, if messages remain.
    pub fn after(checkpoint: &StoredCheckpoint) -> Result<Option<Self>> {
        if !checkpoint.continues() {
            return Ok(None);
        }
        // A window cut short was verified to end on this digest; without it the answer could
        // only be a history cut short, which no client may get.
        let before = checkpoint.chains.after.ok_or_else(|| {
            Error::internal(format!(
                "the window of checkpoint {} stops at message {} without its digest",
                checkpoint.step, checkpoint.messages_end
            ))
        })?;
        Ok(Some(Self {
            step: checkpoint.step,
            checkpoint_id: checkpoint.id.clone(),
            checksum: checkpoint.checksum,
            offset: checkpoint.messages_end,
            before,
        }))
    }
}

/// One ListCheckpoints request, parsed.
#[derive(Clone, Debug)]
pub struct ListRequest {
    pub page_size: PageSize,
    /// The last step of the previous page, in the listing's direction.
    pub after: Option<Step>,
    pub descending: bool,
    /// Only steps strictly below this one.
    pub before: Option<Step>,
    /// Every entry must be in the checkpoint's metadata with exactly this value.
    pub metadata: BTreeMap<String, String>,
}

/// A damaged tool journal cannot be skipped past: dropping a result would let a side-effecting
/// tool run twice, so the read fails instead. Only the entries read are verified, from the
/// digest stored before them ([`verify_tool_window`]): a load costs the journal it returns.
fn verify_journal(snapshot: &Snapshot) -> Result<()> {
    verify_tool_window(&snapshot.tools, &snapshot.tool_window).map_err(journal_corrupt)
}

fn journal_corrupt(reason: String) -> Error {
    Error::DataLoss(format!("tool journal is corrupt: {reason}"))
}

/// Checksum v1 over the snapshot's windows of the log and the journal.
fn verify_checkpoint(snapshot: &Snapshot) -> std::result::Result<(), String> {
    snapshot
        .checkpoint
        .verify_window(&snapshot.tools, &snapshot.tool_window)
}
