//! The worker: claims tasks, keeps their leases alive, drives them, and drains on shutdown.

use std::sync::Arc;
use std::time::Duration;

use checkpointd_protocol::ClaimBatch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tonic::Code;

use crate::agent::Agent;
use crate::api::RunnerApi;
use crate::claimed::ClaimedTask;
use crate::events::RunnerEvents;
use crate::proto::{ClaimRequest, Task};
use crate::recovery::{Driver, RecoveryPolicy, Signals, TaskEnd, drive_task};
use crate::session::RunStats;

/// How a worker claims and runs tasks.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub worker_id: String,
    /// The tenant the worker's calls carry, if any.
    pub tenant: Option<String>,
    /// Tasks run at once.
    pub concurrency: usize,
    /// Lease asked for on each claim; heartbeats renew it every third of it.
    pub lease: Duration,
    /// Pause between claims when the queue is empty.
    pub poll_interval: Duration,
    /// Stop after this many tasks reached an end (None: run until shut down). A task parked
    /// for approval has not ended: it comes back once a human decides.
    pub exit_after: Option<usize>,
    pub recovery: RecoveryPolicy,
}

/// What a worker did, for its closing summary.
#[derive(Debug, Default)]
pub struct WorkerReport {
    pub ends: Vec<(String, TaskEnd)>,
    pub stats: RunStats,
}

/// Claims and drives tasks until `shutdown` is cancelled (or `exit_after` tasks ended). On
/// shutdown it stops claiming, lets running steps finish within the drain deadline, checkpoints
/// and releases their tasks with no attempt charged.
pub async fn run_worker(
    agent: Arc<dyn Agent>,
    api: Arc<dyn RunnerApi>,
    events: Arc<dyn RunnerEvents>,
    config: WorkerConfig,
    shutdown: CancellationToken,
) -> Result<WorkerReport, String> {
    let mut running: JoinSet<(String, TaskEnd, RunStats)> = JoinSet::new();
    let mut report = WorkerReport::default();
    let done = |report: &WorkerReport| {
        config.exit_after.is_some_and(|limit| {
            let ended = report.ends.iter().filter(|(_, end)| has_ended(end));
            ended.count() >= limit
        })
    };
    while !shutdown.is_cancelled() && !done(&report) {
        let free = config.concurrency.saturating_sub(running.len());
        let claimed = if free > 0 {
            claim(&api, &config, free).await
        } else {
            Vec::new()
        };
        let claimed_any = !claimed.is_empty();
        for task in claimed {
            tracing::info!(task_id = %task.task_id, run_id = %task.run_id, attempt = task.attempt, "task claimed");
            let task = ClaimedTask::new(api.clone(), task, config.tenant.clone());
            let driver = Driver {
                api: api.clone(),
                events: events.clone(),
                policy: config.recovery.clone(),
                signals: Signals {
                    shutdown: shutdown.clone(),
                    lease_lost: CancellationToken::new(),
                },
            };
            let agent = agent.clone();
            let lease = config.lease;
            running.spawn(async move { run_one(agent, driver, task, lease).await });
        }
        if !claimed_any {
            tokio::select! {
                _ = tokio::time::sleep(config.poll_interval) => {}
                _ = shutdown.cancelled() => {}
                Some(joined) = running.join_next(), if !running.is_empty() => collect(&mut report, joined),
            }
        }
        while let Some(joined) = running.try_join_next() {
            collect(&mut report, joined);
        }
    }
    while let Some(joined) = running.join_next().await {
        collect(&mut report, joined);
    }
    Ok(report)
}

/// Whether `end` counts toward `exit_after`: everything but waiting for a human, which hands
/// the task back to come again once decided.
fn has_ended(end: &TaskEnd) -> bool {
    !matches!(end, TaskEnd::AwaitingApproval(_))
}

async fn claim(api: &Arc<dyn RunnerApi>, config: &WorkerConfig, free: usize) -> Vec<Task> {
    let request = ClaimRequest {
        worker_id: config.worker_id.clone(),
        lease_duration: prost_types::Duration::try_from(config.lease).ok(),
        batch_size: ClaimBatch::up_to(free).get(),
    };
    match api.claim(request).await {
        Ok(tasks) => tasks,
        Err(status) => {
            tracing::warn!(code = ?status.code(), message = status.message(), "claim failed; retrying");
            Vec::new()
        }
    }
}

fn collect(
    report: &mut WorkerReport,
    joined: Result<(String, TaskEnd, RunStats), tokio::task::JoinError>,
) {
    match joined {
        Ok((task_id, end, stats)) => {
            report.stats.absorb(stats);
            report.ends.push((task_id, end));
        }
        Err(error) => tracing::error!(%error, "a task's driver panicked; its lease will expire"),
    }
}

async fn run_one(
    agent: Arc<dyn Agent>,
    driver: Driver,
    task: ClaimedTask,
    lease: Duration,
) -> (String, TaskEnd, RunStats) {
    let finished = CancellationToken::new();
    let heartbeat = tokio::spawn(keep_lease(
        task.clone(),
        lease,
        driver.signals.lease_lost.clone(),
        finished.clone(),
    ));
    let task_id = task.task_id().to_owned();
    let mut stats = RunStats::default();
    let end = drive_task(agent.as_ref(), &driver, task, &mut stats).await;
    finished.cancel();
    let _ = heartbeat.await;
    (task_id, end, stats)
}

/// Renews the lease every third of its length until the task ends; a fenced heartbeat means
/// another worker reclaimed the task, and the driver is told to stop.
async fn keep_lease(
    task: ClaimedTask,
    lease: Duration,
    lease_lost: CancellationToken,
    finished: CancellationToken,
) {
    let interval = lease / 3;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = finished.cancelled() => return,
        }
        match task.heartbeat(lease).await {
            Ok(()) => {}
            Err(status) if status.code() == Code::FailedPrecondition => {
                tracing::warn!(task_id = %task.task_id(), "lease lost; stopping this task");
                lease_lost.cancel();
                return;
            }
            Err(status) => {
                tracing::warn!(task_id = %task.task_id(), code = ?status.code(), "heartbeat failed; retrying")
            }
        }
    }
}
