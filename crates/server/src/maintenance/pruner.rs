//! The retention pruner: plans each run with [`checkpointd_core::retention`] and deletes in small
//! fenced batches, once (`checkpointd prune`) or periodically inside the server, where each pass
//! also prunes the webhook outbox of what it has settled.

use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use crate::config::RetentionSettings;
use crate::service::Engine;
use checkpointd_core::domain::{Epoch, RunKey, Step};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::retention::{self, Protected, RetentionPolicy};
use checkpointd_storage::notifications::{NotificationStore, OutboxPruned};
use checkpointd_storage::store::RetentionStore;

/// What a pass decided for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedPrune {
    pub run: RunKey,
    pub policy: RetentionPolicy,
    /// The run's epoch when its facts were read; the deletes are fenced on it.
    pub epoch: Epoch,
    /// The latest valid checkpoint, kept.
    pub latest_valid: Step,
    /// The steps that go (or would go, in a dry run), ascending.
    pub steps: Vec<Step>,
}

/// The totals of one pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PruneReport {
    pub runs_scanned: u64,
    /// Runs with something to prune.
    pub runs_pruned: u64,
    /// Checkpoints deleted, or that would be in a dry run.
    pub checkpoints: u64,
    /// Runs skipped because a Resume began while they were being pruned; the next pass
    /// plans them again.
    pub runs_fenced: u64,
}

/// Applies retention policies to every run of a store.
#[derive(Clone)]
pub struct Pruner {
    /// Finds each run's latest valid checkpoint, which no policy prunes.
    engine: Engine,
    /// The store itself (never a cache): the runs, their facts, and the fenced deletes.
    store: Arc<dyn RetentionStore>,
    settings: RetentionSettings,
    /// The webhook outbox, pruned after each periodic pass, when the server has one.
    outbox: Option<OutboxRetention>,
}

/// The webhook outbox and how long it keeps what it has settled.
#[derive(Clone)]
struct OutboxRetention {
    store: Arc<dyn NotificationStore>,
    keep: Duration,
}

impl Pruner {
    pub fn new(
        engine: Engine,
        store: Arc<dyn RetentionStore>,
        settings: RetentionSettings,
    ) -> Self {
        Self {
            engine,
            store,
            settings,
            outbox: None,
        }
    }

    /// Also prunes `outbox` after each periodic pass: settled deliveries and events left with
    /// no delivery, once older than `keep`. A zero `keep` keeps everything.
    pub fn with_outbox(mut self, outbox: Arc<dyn NotificationStore>, keep: Duration) -> Self {
        self.outbox = (!keep.is_zero()).then_some(OutboxRetention {
            store: outbox,
            keep,
        });
        self
    }

    /// Deletes what the outbox keeps no longer at `now`, and logs what went; nothing when the
    /// pruner has no outbox.
    pub async fn prune_outbox(&self, now: SystemTime) -> Result<OutboxPruned> {
        let Some(outbox) = &self.outbox else {
            return Ok(OutboxPruned::default());
        };
        let before = now
            .checked_sub(outbox.keep)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let pruned = outbox.store.prune_outbox(before).await?;
        if pruned != OutboxPruned::default() {
            tracing::info!(
                deliveries = pruned.deliveries,
                events = pruned.events,
                "webhook outbox pruned"
            );
        }
        Ok(pruned)
    }

    /// One pass over every run. A dry run deletes nothing and reports what would go.
    /// `on_plan` sees each run that has something to prune, as it is planned.
    pub async fn pass(
        &self,
        dry_run: bool,
        stop: &CancellationToken,
        mut on_plan: impl FnMut(&PlannedPrune),
    ) -> Result<PruneReport> {
        let batch = self.settings.batch_size.max(1);
        let mut report = PruneReport::default();
        // Pins only ever keep more, so under a keep-everything default only runs that chose a
        // policy can lose anything; the partial index on those makes the listing cheap.
        let with_policy_only = self.settings.default_policy == RetentionPolicy::All;
        let mut after: Option<RunKey> = None;
        loop {
            let runs = self
                .store
                .runs_after(after.as_ref(), batch, with_policy_only)
                .await?;
            for run in &runs {
                if stop.is_cancelled() {
                    return Ok(report);
                }
                report.runs_scanned += 1;
                let Some(plan) = self.plan(run).await? else {
                    continue;
                };
                on_plan(&plan);
                report.runs_pruned += 1;
                if dry_run {
                    report.checkpoints += plan.steps.len() as u64;
                    continue;
                }
                match self.apply(&plan, batch, stop).await {
                    Ok(deleted) => report.checkpoints += deleted,
                    Err(Error::StaleEpoch(_)) => report.runs_fenced += 1,
                    Err(error) => return Err(error),
                }
            }
            if runs.len() < batch {
                return Ok(report);
            }
            after = runs.last().cloned();
        }
    }

    /// Decides what goes from one run; `None` when nothing does.
    pub async fn plan(&self, run: &RunKey) -> Result<Option<PlannedPrune>> {
        let Some(facts) = self.store.retention_facts(run).await? else {
            return Ok(None);
        };
        let policy = match facts.policy.as_deref().map(str::parse::<RetentionPolicy>) {
            None => self.settings.default_policy,
            Some(Ok(policy)) => policy,
            Some(Err(error)) => {
                // Only a hand-edited row gets here; keeping everything is the safe reading.
                tracing::warn!(run_id = %run.run_id, tenant = %run.tenant, %error,
                    "unreadable retention policy; keeping every checkpoint");
                return Ok(None);
            }
        };
        let now = SystemTime::now();
        // A cheap first cut from the listing alone: most runs have nothing to prune, and
        // those are decided without reading any checkpoint's content.
        let Some(listed_latest) = facts
            .checkpoints
            .iter()
            .rev()
            .find(|facts| !facts.quarantined)
            .map(|facts| facts.step)
        else {
            return Ok(None);
        };
        let unverified = Protected {
            latest_valid: listed_latest,
            journal_base: None,
        };
        if retention::prunable(policy, &facts.checkpoints, unverified, now).is_empty() {
            return Ok(None);
        }
        // "Latest valid" means verified, not merely "not quarantined": if the newest
        // checkpoint were corrupt, Resume would fall back to an older one, which must still
        // be there.
        let Some(latest) = self.engine.verified_latest(run).await? else {
            return Ok(None);
        };
        let latest_valid = latest.checkpoint.step;
        let protected = Protected {
            latest_valid,
            journal_base: retention::journal_base(
                &latest.tools,
                latest.checkpoint.tool_count,
                &facts.checkpoints,
            ),
        };
        let steps = retention::prunable(policy, &facts.checkpoints, protected, now);
        Ok((!steps.is_empty()).then(|| PlannedPrune {
            run: run.clone(),
            policy,
            epoch: facts.epoch,
            latest_valid,
            steps,
        }))
    }

    /// Deletes a plan's steps, `batch` per transaction; returns how many went.
    async fn apply(
        &self,
        plan: &PlannedPrune,
        batch: usize,
        stop: &CancellationToken,
    ) -> Result<u64> {
        let mut deleted = 0;
        for chunk in plan.steps.chunks(batch) {
            if stop.is_cancelled() {
                break;
            }
            deleted += self.store.prune(&plan.run, plan.epoch, chunk).await?;
        }
        tracing::info!(
            run_id = %plan.run.run_id,
            tenant = %plan.run.tenant,
            policy = %plan.policy,
            deleted,
            "checkpoints pruned"
        );
        Ok(deleted)
    }

    /// Runs a pass every `prune_interval` until `stop` is cancelled; a failed pass is logged
    /// and retried at the next tick.
    pub async fn run_periodically(self, stop: CancellationToken) {
        if self.settings.prune_interval.is_zero() {
            return;
        }
        let mut ticks = tokio::time::interval(self.settings.prune_interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            match self.pass(false, &stop, |_| {}).await {
                Ok(report) if report.checkpoints > 0 || report.runs_fenced > 0 => {
                    tracing::info!(
                        runs_scanned = report.runs_scanned,
                        checkpoints = report.checkpoints,
                        runs_fenced = report.runs_fenced,
                        "prune pass finished"
                    );
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "prune pass failed; retrying next interval"),
            }
            if let Err(error) = self.prune_outbox(SystemTime::now()).await {
                tracing::warn!(%error, "outbox prune failed; retrying next interval");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use super::Pruner;
    use crate::config::RetentionSettings;
    use crate::service::Engine;
    use checkpointd_core::domain::{RunId, Tenant};
    use checkpointd_core::notify::{CorruptFinding, Settlement, WebhookEndpoint, corrupt_event};
    use checkpointd_storage::notifications::{
        MemoryNotifications, NotificationStore, OutboxPruned,
    };
    use checkpointd_storage::store::MemoryStore;

    const WEEK: Duration = Duration::from_secs(7 * 24 * 3600);

    /// An outbox holding one delivered event, created `age` before `now`.
    async fn outbox_with_a_delivered_event(
        now: SystemTime,
        age: Duration,
    ) -> Arc<MemoryNotifications> {
        let outbox = Arc::new(MemoryNotifications::new());
        let tenant = Tenant::parse("acme").unwrap();
        outbox
            .create_endpoint(&WebhookEndpoint {
                id: "e1".into(),
                tenant: tenant.clone(),
                url: "http://127.0.0.1:9/e1".into(),
                description: String::new(),
                salt: vec![1; 16],
                created_at: now - age,
            })
            .await
            .unwrap();
        let finding = CorruptFinding {
            run_id: RunId::parse("run-1").unwrap(),
            found_by: "quarantine",
            step: Some(1),
            call_id: None,
            detail: String::new(),
        };
        let event = outbox
            .append_event(&corrupt_event(&tenant, &finding, now - age))
            .await
            .unwrap();
        assert!(
            outbox
                .settle(&event.id, "e1", &Settlement::Delivered, now)
                .await
                .unwrap()
        );
        outbox
    }

    fn pruner() -> Pruner {
        let store = Arc::new(MemoryStore::new());
        Pruner::new(
            Engine::new(store.clone()),
            store,
            RetentionSettings::default(),
        )
    }

    #[tokio::test]
    async fn the_pruner_deletes_what_the_outbox_settled_longer_ago_than_its_retention() {
        let now = SystemTime::now();
        let old = outbox_with_a_delivered_event(now, WEEK + Duration::from_secs(60)).await;
        let pruned = pruner()
            .with_outbox(old, WEEK)
            .prune_outbox(now)
            .await
            .unwrap();
        assert_eq!(
            pruned,
            OutboxPruned {
                deliveries: 1,
                events: 1
            }
        );

        let young = outbox_with_a_delivered_event(now, WEEK - Duration::from_secs(60)).await;
        let pruned = pruner()
            .with_outbox(young, WEEK)
            .prune_outbox(now)
            .await
            .unwrap();
        assert_eq!(pruned, OutboxPruned::default());
    }

    #[tokio::test]
    async fn a_zero_retention_keeps_the_whole_outbox() {
        let now = SystemTime::now();
        let old = outbox_with_a_delivered_event(now, 4 * WEEK).await;
        let pruned = pruner()
            .with_outbox(old.clone(), Duration::ZERO)
            .prune_outbox(now)
            .await
            .unwrap();
        assert_eq!(pruned, OutboxPruned::default());
        assert_eq!(old.delivery_depth().await.unwrap().len(), 1);
    }
}
