//! Queue throughput: concurrent claimers, each on its own gRPC connection, drain a backlog of
//! tasks (Claim, then Complete), and again with a real agent step (Resume, Save 1 KB) between.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::BoxError;
use super::claimer::{Drained, drain};
pub use super::claimer::{LEASE, Variant};
use super::payload::agent_state;
use super::stats::{Samples, Summary};
use checkpointd_protocol::v1::{EnqueueRequest, ListRequest, TaskState};
use checkpointd_runner::client::Clients;

/// Size of the state the agent step saves.
pub const STEP_STATE: usize = 1024;

/// How much the queue scenario does.
#[derive(Clone, Copy, Debug)]
pub struct QueueEffort {
    /// Tasks per variant, over all rounds.
    pub tasks: usize,
    /// Concurrent claimers.
    pub workers: usize,
    /// Backlogs per variant: each round enqueues its share, then drains it; the variants take
    /// turns round by round.
    pub rounds: usize,
}

impl QueueEffort {
    pub fn per_round(&self) -> usize {
        self.tasks.div_ceil(self.rounds.max(1)).max(1)
    }

    pub fn total(&self) -> usize {
        self.per_round() * self.rounds.max(1)
    }
}

/// One variant's figures.
#[derive(Clone, Debug)]
pub struct QueueResult {
    pub variant: Variant,
    pub workers: usize,
    /// Per task, from the start of its Claim to the end of its Complete; `ops_per_sec` is tasks
    /// over the summed wall time of the drains.
    pub task: Summary,
    pub claim: Summary,
    /// Resume + Save, for the agent-step variant.
    pub step: Option<Summary>,
    pub complete: Summary,
    /// Enqueues per second while filling the backlogs (same clients, not part of the drain).
    pub enqueue_per_sec: f64,
    /// Claims that found nothing while the last tasks were held by other claimers.
    pub empty_claims: usize,
    /// What the check of every task found.
    pub verified: String,
}

/// One variant: its server, its claimers' connections, what they recorded.
struct Lane {
    variant: Variant,
    workers: Vec<Clients>,
    drained: Drained,
    task_samples: Samples,
    enqueue_wall: Duration,
    enqueued: usize,
}

/// Measures each variant against its own server (`servers` pairs a variant with the URL of a
/// server on a fresh schema), interleaved round by round; then checks that every task
/// completed once.
pub async fn measure(
    servers: &[(Variant, String)],
    effort: QueueEffort,
    run_prefix: &str,
) -> Result<Vec<QueueResult>, BoxError> {
    let state = Arc::new(agent_state(STEP_STATE, 7));
    let mut lanes = Vec::with_capacity(servers.len());
    for (variant, url) in servers {
        let mut workers = Vec::with_capacity(effort.workers);
        for _ in 0..effort.workers.max(1) {
            workers.push(Clients::connect(url, None).await?);
        }
        lanes.push(Lane {
            variant: *variant,
            workers,
            drained: Drained::default(),
            task_samples: Samples::default(),
            enqueue_wall: Duration::ZERO,
            enqueued: 0,
        });
    }
    let count = lanes.len();
    for round in 0..effort.rounds.max(1) {
        for offset in 0..count {
            let lane = &mut lanes[(round + offset) % count];
            let prefix = format!("{run_prefix}-{}-{round}", lane.variant.tag());
            let started = Instant::now();
            enqueue(&lane.workers, &prefix, effort.per_round()).await?;
            lane.enqueue_wall += started.elapsed();
            lane.enqueued += effort.per_round();
            let (drained, wall) =
                drain(&lane.workers, lane.variant, effort.per_round(), &state).await?;
            lane.task_samples.add_batch(&drained.task, wall);
            lane.drained.absorb(drained);
        }
    }
    let mut results = Vec::with_capacity(lanes.len());
    for lane in lanes {
        let verified = verify(&lane.workers[0], lane.enqueued, &lane.drained.ids)
            .await
            .map_err(|error| format!("queue, {}: {error}", lane.variant.label()))?;
        let summary = |latencies: &[Duration]| {
            let mut samples = Samples::default();
            samples.add_batch(latencies, Duration::ZERO);
            samples.summary()
        };
        results.push(QueueResult {
            variant: lane.variant,
            workers: lane.workers.len(),
            task: lane.task_samples.summary(),
            claim: summary(&lane.drained.claim),
            step: (lane.variant == Variant::AgentStep).then(|| summary(&lane.drained.step)),
            complete: summary(&lane.drained.complete),
            enqueue_per_sec: lane.enqueued as f64 / lane.enqueue_wall.as_secs_f64().max(1e-9),
            empty_claims: lane.drained.empty_claims,
            verified,
        });
    }
    Ok(results)
}

/// Enqueues `count` tasks, spread over the workers' connections, concurrently.
async fn enqueue(workers: &[Clients], prefix: &str, count: usize) -> Result<(), BoxError> {
    let mut handles = Vec::with_capacity(workers.len());
    for (index, clients) in workers.iter().enumerate() {
        let mut tasks = clients.tasks.clone();
        let indices: Vec<usize> = (index..count).step_by(workers.len()).collect();
        let prefix = prefix.to_owned();
        handles.push(tokio::spawn(async move {
            for i in indices {
                tasks
                    .enqueue(EnqueueRequest {
                        run_id: format!("{prefix}-{i}"),
                        input: br#"{"steps":1}"#.to_vec(),
                        ..EnqueueRequest::default()
                    })
                    .await?;
            }
            Ok::<_, BoxError>(())
        }));
    }
    for handle in handles {
        handle.await??;
    }
    Ok(())
}

/// Checks on the client side that no task was completed twice, and on the server side that
/// every task of the schema is completed, on its first attempt.
async fn verify(clients: &Clients, expected: usize, ids: &[String]) -> Result<String, BoxError> {
    let completed: HashSet<&str> = ids.iter().map(String::as_str).collect();
    if completed.len() != ids.len() {
        return Err(format!(
            "{} completions for {} distinct tasks",
            ids.len(),
            completed.len()
        )
        .into());
    }
    let mut tasks = clients.tasks.clone();
    let mut token = String::new();
    let mut listed = 0;
    loop {
        let page = tasks
            .list(ListRequest {
                state: TaskState::Unspecified as i32,
                page_size: 1000,
                page_token: token,
            })
            .await?
            .into_inner();
        for task in &page.tasks {
            listed += 1;
            if task.state != TaskState::Completed as i32
                || task.attempt != 1
                || !completed.contains(task.task_id.as_str())
            {
                return Err(format!(
                    "task {} is in state {} at attempt {}, completed by a claimer: {}",
                    task.task_id,
                    task.state,
                    task.attempt,
                    completed.contains(task.task_id.as_str())
                )
                .into());
            }
        }
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    if listed != expected || completed.len() != expected {
        return Err(format!(
            "{expected} tasks enqueued, {listed} listed, {} completed",
            completed.len()
        )
        .into());
    }
    Ok(format!(
        "all {expected} tasks completed exactly once, attempt 1"
    ))
}
