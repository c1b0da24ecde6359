//! The in-memory store's tool intents, journal repairs and journal windows.

use super::{MemoryStore, RunData};
use checkpointd_core::domain::{
    Digest32, EntryKind, IntentOutcome, JournalAction, JournalScope, NewToolIntent, Quarantine,
    Step, ToolRecord, ToolWindow,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::{self, IntentPlan, JournalRewrite};

impl MemoryStore {
    pub(super) fn journal_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome> {
        self.with_runs(|runs| {
            let empty = RunData::new();
            let run = runs.get(&intent.run).unwrap_or(&empty);
            let find = |kind| {
                run.tools
                    .iter()
                    .find(|record| record.call_id == intent.call_id && record.kind == kind)
                    .cloned()
            };
            let (existing_intent, existing_result) =
                (find(EntryKind::Intent), find(EntryKind::Result));
            match plan::plan_tool_intent(intent, &run.head, existing_intent, existing_result)? {
                IntentPlan::Existing(outcome) => Ok(outcome),
                IntentPlan::Insert(record, tools) => {
                    let run = runs.entry(intent.run.clone()).or_insert_with(RunData::new);
                    run.tools.push(record.clone());
                    run.head.tools = tools;
                    run.updated_at = record.recorded_at;
                    Ok(IntentOutcome {
                        intent: Some(record),
                        result: None,
                        already_recorded: false,
                    })
                }
            }
        })
    }

    pub(super) fn journal_rewrite(&self, rewrite: &JournalRewrite) -> Result<Vec<Step>> {
        self.with_runs(|runs| {
            let data = runs
                .get_mut(&rewrite.run)
                .ok_or_else(|| Error::run_not_found(&rewrite.run.run_id))?;
            plan::check_journal_unchanged(&rewrite.expected, &data.head.tools)?;
            let keep = usize::try_from(rewrite.from_seq - 1).unwrap_or(usize::MAX);
            data.tools.truncate(keep);
            data.tools.extend(rewrite.entries.iter().cloned());
            data.updated_at = std::time::SystemTime::now();
            data.head.tools = rewrite.head;
            let mut quarantined = Vec::new();
            if let Some(from) = rewrite.quarantine_from {
                let reason = rewrite.quarantine_reason();
                for (step, row) in data.checkpoints.iter_mut() {
                    if row.tool_count >= from && row.quarantine.is_none() {
                        row.quarantine =
                            Some(Quarantine::new(reason.clone(), rewrite.action.acted_at));
                        quarantined.push(*step);
                    }
                }
            }
            data.actions.push(rewrite.action.clone());
            Ok(quarantined)
        })
    }

    /// Replaces a journal entry's output behind the store's back, as a bad disk would.
    #[cfg(any(test, feature = "testsuite"))]
    pub fn overwrite_tool_output(
        &self,
        run: &checkpointd_core::domain::RunKey,
        seq: u64,
        output: &[u8],
    ) {
        self.with_runs(|runs| {
            let record = runs
                .get_mut(run)
                .and_then(|data| data.tools.iter_mut().find(|record| record.seq == seq))
                .unwrap_or_else(|| panic!("no journal entry {seq} to overwrite"));
            record.output = output.to_vec();
        });
    }

    /// Overwrites the chain digest stored with journal entry `seq`, as a bad disk would.
    pub fn overwrite_tool_chain(
        &self,
        run: &checkpointd_core::domain::RunKey,
        seq: u64,
        chain: Digest32,
    ) {
        self.with_runs(|runs| {
            let record = runs
                .get_mut(run)
                .and_then(|data| data.tools.iter_mut().find(|record| record.seq == seq))
                .unwrap_or_else(|| panic!("no journal entry {seq} to overwrite"));
            record.chain = chain;
        });
    }

    pub(super) fn journal_actions_of(
        &self,
        run: &checkpointd_core::domain::RunKey,
    ) -> Result<Vec<JournalAction>> {
        self.with_runs(|runs| {
            Ok(runs
                .get(run)
                .map(|data| data.actions.clone())
                .unwrap_or_default())
        })
    }
}

impl RunData {
    /// The journal entries a load with `scope` reads for the checkpoint at `step` covering
    /// `tool_count` entries, with the digests stored around them (the store contract's
    /// [`super::CheckpointStore::load_window`]).
    pub(super) fn journal_window(
        &self,
        scope: JournalScope,
        step: Step,
        tool_count: u64,
    ) -> (Vec<ToolRecord>, ToolWindow) {
        let from = match scope {
            JournalScope::All => return (self.tools.clone(), ToolWindow::WHOLE),
            JournalScope::Step => self
                .tools
                .iter()
                .find(|record| record.step == step)
                .map_or(self.tools.len() as u64 + 1, |record| record.seq),
            JournalScope::None => ToolWindow::NO_ENTRIES,
        };
        let tools = self
            .tools
            .iter()
            .filter(|record| record.seq >= from)
            .cloned()
            .collect();
        let window = ToolWindow {
            from,
            before: self.tool_chain_at(from - 1),
            covered: self.tool_chain_at(tool_count),
        };
        (tools, window)
    }

    /// The digest stored with journal entry `seq`, if there is one.
    fn tool_chain_at(&self, seq: u64) -> Option<Digest32> {
        self.tools
            .binary_search_by_key(&seq, |record| record.seq)
            .ok()
            .map(|index| self.tools[index].chain)
    }
}
