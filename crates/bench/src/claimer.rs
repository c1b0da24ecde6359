//! The queue scenario's workers: tokio tasks that claim, optionally run an agent step, and
//! complete, each over its own gRPC connection, until a backlog is drained.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::BoxError;
use checkpointd_protocol::v1::{ClaimRequest, CompleteRequest, ResumeRequest, SaveRequest};
use checkpointd_runner::client::Clients;

/// The lease every claim asks for: long enough that no task is reclaimed while measured.
pub const LEASE: Duration = Duration::from_secs(30);

/// What a claimer does with each task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Claim, then Complete: the queue alone.
    Bare,
    /// Claim, Resume the task's run, Save a 1 KB checkpoint with the new epoch, Complete.
    AgentStep,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Bare, Variant::AgentStep];

    pub fn label(self) -> &'static str {
        match self {
            Variant::Bare => "Claim + Complete",
            Variant::AgentStep => "Claim + Resume + Save 1 KB + Complete",
        }
    }

    pub fn tag(self) -> &'static str {
        match self {
            Variant::Bare => "bare",
            Variant::AgentStep => "step",
        }
    }
}

/// How long a claimer may find nothing to claim while tasks are still unclaimed.
const IDLE_LIMIT: Duration = Duration::from_secs(30);

/// Everything one drain (or several) recorded.
#[derive(Default)]
pub struct Drained {
    pub task: Vec<Duration>,
    pub claim: Vec<Duration>,
    pub step: Vec<Duration>,
    pub complete: Vec<Duration>,
    pub ids: Vec<String>,
    pub empty_claims: usize,
}

impl Drained {
    pub fn absorb(&mut self, other: Drained) {
        self.task.extend(other.task);
        self.claim.extend(other.claim);
        self.step.extend(other.step);
        self.complete.extend(other.complete);
        self.ids.extend(other.ids);
        self.empty_claims += other.empty_claims;
    }
}

/// Every worker claims and finishes tasks until `count` have been claimed; returns what they
/// recorded and the wall time from the first claim to the last completion.
pub async fn drain(
    workers: &[Clients],
    variant: Variant,
    count: usize,
    state: &Arc<Vec<u8>>,
) -> Result<(Drained, Duration), BoxError> {
    let claimed = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let handles: Vec<_> = workers
        .iter()
        .enumerate()
        .map(|(index, clients)| {
            let claimer = Claimer {
                clients: clients.clone(),
                worker_id: format!("bench-claimer-{index}"),
                variant,
                count,
                claimed: claimed.clone(),
                state: state.clone(),
            };
            tokio::spawn(claimer.run())
        })
        .collect();
    let mut drained = Drained::default();
    let mut failure = None;
    for handle in handles {
        match handle.await? {
            Ok(part) => drained.absorb(part),
            Err(error) => failure = failure.or(Some(error)),
        }
    }
    let wall = started.elapsed();
    match failure {
        Some(error) => Err(error),
        None => Ok((drained, wall)),
    }
}

struct Claimer {
    clients: Clients,
    worker_id: String,
    variant: Variant,
    count: usize,
    /// Tasks claimed by all claimers of this drain.
    claimed: Arc<AtomicUsize>,
    state: Arc<Vec<u8>>,
}

impl Claimer {
    async fn run(mut self) -> Result<Drained, BoxError> {
        let mut out = Drained::default();
        let mut idle_since: Option<Instant> = None;
        while self.claimed.load(Ordering::SeqCst) < self.count {
            let started = Instant::now();
            let reply = self
                .clients
                .tasks
                .claim(ClaimRequest {
                    worker_id: self.worker_id.clone(),
                    lease_duration: prost_types::Duration::try_from(LEASE).ok(),
                    batch_size: 1,
                })
                .await?
                .into_inner();
            let claimed_at = Instant::now();
            let Some(task) = reply.tasks.into_iter().next() else {
                // The tasks left are locked by other claimers' claims in flight.
                out.empty_claims += 1;
                if idle_since.get_or_insert(claimed_at).elapsed() > IDLE_LIMIT {
                    return Err(format!(
                        "{} found nothing to claim for {IDLE_LIMIT:?} with {} of {} tasks claimed",
                        self.worker_id,
                        self.claimed.load(Ordering::SeqCst),
                        self.count
                    )
                    .into());
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                continue;
            };
            idle_since = None;
            self.claimed.fetch_add(1, Ordering::SeqCst);
            if self.variant == Variant::AgentStep {
                self.step(&task.run_id).await?;
            }
            let stepped = Instant::now();
            self.clients
                .tasks
                .complete(CompleteRequest {
                    task_id: task.task_id.clone(),
                    attempt: task.attempt,
                    result: Vec::new(),
                })
                .await?;
            let done = Instant::now();
            out.task.push(done - started);
            out.claim.push(claimed_at - started);
            out.step.push(stepped - claimed_at);
            out.complete.push(done - stepped);
            out.ids.push(task.task_id);
        }
        Ok(out)
    }

    /// What a real agent does with a fresh task: Resume its run, then checkpoint a step.
    async fn step(&mut self, run_id: &str) -> Result<(), BoxError> {
        let resumed = self
            .clients
            .checkpoints
            .resume(ResumeRequest {
                run_id: run_id.to_owned(),
                ..Default::default()
            })
            .await?
            .into_inner();
        let saved = self
            .clients
            .checkpoints
            .save(SaveRequest {
                run_id: run_id.to_owned(),
                step: resumed.recovered_from_step + 1,
                content_type: "application/json".to_owned(),
                state: self.state.to_vec(),
                epoch: Some(resumed.epoch),
                ..SaveRequest::default()
            })
            .await?
            .into_inner();
        if saved.already_existed {
            return Err(format!("the step of {run_id} was already saved").into());
        }
        Ok(())
    }
}
