//! The in-memory store's retention contract: policies, pins, the facts the pruner decides on,
//! pruning, and the store-wide listings of maintenance.

use async_trait::async_trait;

use super::{MemoryStore, RunData, no_checkpoint};
use crate::store::{CheckpointRef, RetentionFacts, RetentionStore};
use checkpointd_core::domain::{Epoch, RunKey, Step, Tenant};
use checkpointd_core::error::Result;
use checkpointd_core::retention::CheckpointFacts;

#[async_trait]
impl RetentionStore for MemoryStore {
    async fn set_retention(&self, run: &RunKey, policy: Option<&str>) -> Result<()> {
        self.with_runs(|runs| {
            let data = runs.entry(run.clone()).or_insert_with(RunData::new);
            data.retention = policy.map(str::to_owned);
            Ok(())
        })
    }

    async fn pin(&self, run: &RunKey, step: Option<Step>, source: &str) -> Result<Option<Step>> {
        self.with_runs(|runs| {
            let Some(data) = runs.get_mut(run) else {
                return match step {
                    Some(step) => Err(no_checkpoint(run, step)),
                    None => Ok(None),
                };
            };
            let target = match step {
                Some(step) if data.checkpoints.contains_key(&step) => step,
                Some(step) => return Err(no_checkpoint(run, step)),
                None => match data.latest_valid(None) {
                    Some((step, _)) => step,
                    None => return Ok(None),
                },
            };
            data.pins.insert((target, source.to_owned()));
            Ok(Some(target))
        })
    }

    async fn unpin(&self, run: &RunKey, step: Option<Step>, source: Option<&str>) -> Result<u64> {
        self.with_runs(|runs| {
            let Some(data) = runs.get_mut(run) else {
                return Ok(0);
            };
            let before = data.pins.len();
            data.pins.retain(|(at, by)| {
                source.is_some_and(|source| by != source) || step.is_some_and(|step| step != *at)
            });
            Ok((before - data.pins.len()) as u64)
        })
    }

    async fn retention_facts(&self, run: &RunKey) -> Result<Option<RetentionFacts>> {
        self.with_runs(|runs| {
            Ok(runs.get(run).map(|data| RetentionFacts {
                epoch: data.head.epoch,
                policy: data.retention.clone(),
                checkpoints: data
                    .checkpoints
                    .iter()
                    .map(|(step, row)| CheckpointFacts {
                        step: *step,
                        created_at: row.created_at,
                        quarantined: row.quarantine.is_some(),
                        pinned_by: data.pinned_by(*step),
                    })
                    .collect(),
            }))
        })
    }

    async fn runs_after(
        &self,
        after: Option<&RunKey>,
        limit: usize,
        with_policy_only: bool,
    ) -> Result<Vec<RunKey>> {
        self.with_runs(|runs| {
            let mut keys: Vec<&RunKey> = runs
                .iter()
                .filter(|(_, data)| !with_policy_only || data.retention.is_some())
                .map(|(key, _)| key)
                .filter(|key| after.is_none_or(|after| order(key) > order(after)))
                .collect();
            keys.sort_by(|a, b| order(a).cmp(&order(b)));
            Ok(keys.into_iter().take(limit).cloned().collect())
        })
    }

    async fn prune(&self, run: &RunKey, epoch: Epoch, steps: &[Step]) -> Result<u64> {
        self.with_runs(|runs| {
            let data = runs.get_mut(run);
            epoch.check_unmoved(run, data.as_ref().map(|data| data.head.epoch))?;
            let Some(data) = data else {
                return Ok(0);
            };
            let Some((latest, _)) = data.latest_valid(None) else {
                return Ok(0);
            };
            let mut deleted = 0;
            for step in steps {
                if *step < latest && !data.pinned(*step) && data.checkpoints.remove(step).is_some()
                {
                    deleted += 1;
                }
            }
            Ok(deleted)
        })
    }

    async fn checkpoints_after(
        &self,
        tenant: Option<&Tenant>,
        after: Option<&CheckpointRef>,
        limit: usize,
    ) -> Result<Vec<CheckpointRef>> {
        self.with_runs(|runs| {
            let mut found: Vec<CheckpointRef> = runs
                .iter()
                .filter(|(key, _)| tenant.is_none_or(|tenant| key.tenant == *tenant))
                .flat_map(|(key, data)| {
                    data.checkpoints.keys().map(move |step| CheckpointRef {
                        run: key.clone(),
                        step: *step,
                    })
                })
                .filter(|at| {
                    after.is_none_or(|after| {
                        position(&at.run, at.step) > position(&after.run, after.step)
                    })
                })
                .collect();
            found.sort_by(|a, b| position(&a.run, a.step).cmp(&position(&b.run, b.step)));
            found.truncate(limit);
            Ok(found)
        })
    }
}

/// The store-wide order of runs: by tenant, then run id.
fn order(run: &RunKey) -> (&str, &str) {
    (run.tenant.as_str(), run.run_id.as_str())
}

/// The store-wide order of checkpoints: by run, then step.
fn position(run: &RunKey, step: Step) -> ((&str, &str), Step) {
    (order(run), step)
}
