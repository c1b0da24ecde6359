//! The in-memory store's listings and heads: checkpoints of a run in either direction, labels,
//! run heads and the run listing.

use super::{CheckpointRow, MemoryStore, RunData};
use checkpointd_core::domain::{
    CheckpointSummary, ListQuery, RunId, RunInfo, RunKey, Step, Tenant,
};
use checkpointd_core::error::Result;

impl RunData {
    pub(super) fn info(&self, run_id: &RunId) -> RunInfo {
        RunInfo {
            run_id: run_id.clone(),
            epoch: self.head.epoch,
            latest_step: self.checkpoints.keys().next_back().copied(),
            latest_valid_step: self.latest_valid(None).map(|(step, _)| step),
            message_count: self.head.messages.len,
            tool_count: self.head.tools.len,
            checkpoint_count: self.checkpoints.len() as u64,
            updated_at: self.updated_at,
        }
    }

    pub(super) fn summary(step: Step, row: &CheckpointRow) -> CheckpointSummary {
        CheckpointSummary {
            step,
            id: row.id.clone(),
            size_bytes: row.state.len() as u64,
            quarantine: row.quarantine.clone(),
            created_at: row.created_at,
            checksum: row.checksum,
            epoch: row.epoch,
            message_count: row.message_count,
            label: row.label.clone(),
            metadata: row.metadata.clone(),
        }
    }
}

impl MemoryStore {
    pub(super) fn list_of(
        &self,
        run: &RunKey,
        query: &ListQuery,
    ) -> Result<Vec<CheckpointSummary>> {
        self.with_runs(|runs| {
            let Some(data) = runs.get(run) else {
                return Ok(Vec::new());
            };
            let admitted = data
                .checkpoints
                .iter()
                .filter(|(step, row)| query.admits(**step) && query.matches(&row.metadata));
            let summary = |(step, row): (&Step, &CheckpointRow)| RunData::summary(*step, row);
            Ok(if query.descending {
                admitted.rev().take(query.limit).map(summary).collect()
            } else {
                admitted.take(query.limit).map(summary).collect()
            })
        })
    }

    pub(super) fn label_step_of(&self, run: &RunKey, label: &str) -> Result<Option<Step>> {
        self.with_runs(|runs| {
            Ok(runs.get(run).and_then(|data| {
                data.checkpoints
                    .iter()
                    .find(|(_, row)| row.label.as_deref() == Some(label))
                    .map(|(step, _)| *step)
            }))
        })
    }

    pub(super) fn run_info_of(&self, run: &RunKey) -> Result<Option<RunInfo>> {
        self.with_runs(|runs| Ok(runs.get(run).map(|data| data.info(&run.run_id))))
    }

    pub(super) fn list_runs_of(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>> {
        self.with_runs(|runs| {
            let mut page: Vec<RunInfo> = runs
                .iter()
                .filter(|(key, _)| {
                    key.tenant == *tenant
                        && key.run_id.as_str().starts_with(prefix)
                        && after.is_none_or(|after| key.run_id.as_str() > after.as_str())
                })
                .map(|(key, data)| data.info(&key.run_id))
                .collect();
            // String order is byte order, as the database backends compare run ids.
            page.sort_by(|a, b| a.run_id.as_str().cmp(b.run_id.as_str()));
            page.truncate(limit);
            Ok(page)
        })
    }
}
