//! Recovery time with real worker processes: one is SIGKILLed mid-task, another reclaims the
//! task once the lease expires and resumes it. The time is split using the stored lease expiry
//! and the second worker's stdout events (`claimed`, `resumed`, `saved`, each with `at_ms`).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::BoxError;
use super::server_process::CheckpointdBinary;
use checkpointd_protocol::v1::{
    EnqueueRequest, GetRequest, ListCheckpointsRequest, Task, TaskState,
};
use checkpointd_runner::client::Clients;

/// How the recovery scenario runs.
#[derive(Clone, Copy, Debug)]
pub struct RecoveryEffort {
    /// Crashes measured.
    pub runs: usize,
    /// Both workers' lease: the stale threshold after which a crashed worker's task is reclaimed.
    pub lease: Duration,
    /// The first worker's simulated model latency per step.
    pub step_delay: Duration,
}

/// Steps of each task: enough that the first worker is always mid-task when killed.
const STEPS: u64 = 40;
/// The second worker's pause between empty claims.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// How long after the kill the stored lease expiry is read.
const SETTLE: Duration = Duration::from_millis(100);
/// Longest wait for any one thing a worker process does.
const PATIENCE: Duration = Duration::from_secs(60);

/// One crash and its recovery; times are Unix milliseconds, on this machine's one clock.
#[derive(Clone, Debug, PartialEq)]
pub struct Recovery {
    /// The latest checkpoint the first worker had written when it was killed.
    pub killed_after_step: i64,
    pub recovered_from_step: i64,
    /// Just after the SIGKILL was sent.
    pub killed_ms: f64,
    /// `lease_expires_at` stored on the task when the first worker died.
    pub expires_ms: f64,
    /// A heartbeat moved the expiry between the read just before the kill and the one after.
    pub renewed_at_kill: bool,
    /// The second worker's events.
    pub claimed_ms: f64,
    pub resumed_ms: f64,
    pub first_saved_ms: f64,
}

impl Recovery {
    /// Kill to lease expiry: how long the queue takes to consider the task stale.
    pub fn detection(&self) -> f64 {
        self.expires_ms - self.killed_ms
    }

    /// Lease expiry to the second worker's claim.
    pub fn claim(&self) -> f64 {
        self.claimed_ms - self.expires_ms
    }

    /// Claim to the end of Resume.
    pub fn resume(&self) -> f64 {
        self.resumed_ms - self.claimed_ms
    }

    /// Resume to the first checkpoint after it.
    pub fn first_step(&self) -> f64 {
        self.first_saved_ms - self.resumed_ms
    }

    pub fn to_resumed(&self) -> f64 {
        self.resumed_ms - self.killed_ms
    }

    pub fn to_first_step(&self) -> f64 {
        self.first_saved_ms - self.killed_ms
    }
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

fn timestamp_ms(timestamp: &prost_types::Timestamp) -> f64 {
    timestamp.seconds as f64 * 1e3 + f64::from(timestamp.nanos) / 1e6
}

/// Runs `effort.runs` crashes against the server at `server` (whose queue must be empty of
/// claimable tasks), one after the other.
pub async fn measure(
    binary: &CheckpointdBinary,
    server: &str,
    effort: RecoveryEffort,
    run_prefix: &str,
) -> Result<Vec<Recovery>, BoxError> {
    let exe = binary.path();
    let clients = Clients::connect(server, None).await?;
    let mut recoveries = Vec::with_capacity(effort.runs);
    for index in 0..effort.runs {
        // Kill after a different step each time, so the kill lands at different points of the
        // heartbeat cycle (a lease is renewed every third of its length).
        let kill_after = 1 + (index % 4) as i64;
        let run_id = format!("{run_prefix}-{index}");
        let recovery = crash_and_recover(exe, server, &clients, effort, &run_id, kill_after)
            .await
            .map_err(|error| format!("recovery run {}: {error}", index + 1))?;
        recoveries.push(recovery);
    }
    Ok(recoveries)
}

async fn crash_and_recover(
    exe: &Path,
    server: &str,
    clients: &Clients,
    effort: RecoveryEffort,
    run_id: &str,
    kill_after: i64,
) -> Result<Recovery, BoxError> {
    let lease = format!("{}ms", effort.lease.as_millis());
    let task = clients
        .tasks
        .clone()
        .enqueue(EnqueueRequest {
            run_id: run_id.to_owned(),
            input: format!("{{\"steps\":{STEPS}}}").into_bytes(),
            ..EnqueueRequest::default()
        })
        .await?
        .into_inner()
        .task
        .ok_or("Enqueue returned no task")?;

    let step_delay = format!("{}ms", effort.step_delay.as_millis());
    let mut first = spawn_worker(
        exe,
        server,
        &["--lease", &lease, "--step-delay", &step_delay],
        "bench-worker-a",
        Stdio::null(),
    )?;
    let killed_after_step = wait_for_checkpoint(clients, run_id, kill_after).await?;
    let before = get(clients, &task.task_id).await?;
    first.start_kill()?;
    let killed_ms = now_ms();
    first.wait().await?;

    let poll = format!("{}ms", POLL_INTERVAL.as_millis());
    let mut second = spawn_worker(
        exe,
        server,
        &[
            "--lease",
            &lease,
            "--poll-interval",
            &poll,
            "--exit-after",
            "1",
        ],
        "bench-worker-b",
        Stdio::piped(),
    )?;
    // A heartbeat the first worker sent just before it died may still be committing: read the
    // expiry once it has settled, well before the earliest possible reclaim (2/3 of the lease).
    tokio::time::sleep((effort.lease / 4).min(SETTLE)).await;
    let dead = get(clients, &task.task_id).await?;
    if dead.state != TaskState::Running as i32 || dead.attempt != 1 {
        return Err(format!(
            "after the kill the task is in state {} at attempt {}",
            dead.state, dead.attempt
        )
        .into());
    }
    let expiry = dead
        .lease_expires_at
        .ok_or("the running task has no lease expiry")?;
    let lines = read_lines(&mut second).await?;
    second.wait().await?;
    let finished = get(clients, &task.task_id).await?;
    if finished.state != TaskState::Completed as i32 || finished.attempt != 2 {
        return Err(format!(
            "the second worker left the task in state {} at attempt {}",
            finished.state, finished.attempt
        )
        .into());
    }
    let events = Events::parse(&lines, run_id)?;
    Ok(Recovery {
        killed_after_step,
        recovered_from_step: events.recovered_from_step,
        killed_ms,
        expires_ms: timestamp_ms(&expiry),
        renewed_at_kill: before.lease_expires_at.as_ref() != Some(&expiry),
        claimed_ms: events.claimed_ms,
        resumed_ms: events.resumed_ms,
        first_saved_ms: events.first_saved_ms,
    })
}

/// `checkpointd worker` with one task at a time, checkpointing every step.
fn spawn_worker(
    exe: &Path,
    server: &str,
    flags: &[&str],
    worker_id: &str,
    stdout: Stdio,
) -> Result<Child, BoxError> {
    Command::new(exe)
        .arg("worker")
        .args(["--server", server, "--concurrency", "1"])
        .args(["--strategy", "every_step", "--worker-id", worker_id])
        .args(flags)
        .env("RUST_LOG", "warn")
        .env_remove("CHECKPOINTD_TENANT")
        .stdin(Stdio::null())
        .stdout(stdout)
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("cannot start {} worker: {error}", exe.display()).into())
}

/// Every stdout line of a worker until it exits.
async fn read_lines(child: &mut Child) -> Result<Vec<String>, BoxError> {
    let stdout = child
        .stdout
        .take()
        .ok_or("the worker's stdout is not piped")?;
    let mut reader = BufReader::new(stdout).lines();
    let mut lines = Vec::new();
    let read = async {
        while let Some(line) = reader.next_line().await? {
            lines.push(line);
        }
        Ok::<_, std::io::Error>(())
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .map_err(|_| format!("the second worker did not finish within {PATIENCE:?}"))??;
    Ok(lines)
}

/// Polls until the run has a checkpoint at `step` or later; returns the latest step.
async fn wait_for_checkpoint(clients: &Clients, run_id: &str, step: i64) -> Result<i64, BoxError> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let latest = clients
            .checkpoints
            .clone()
            .list_checkpoints(ListCheckpointsRequest {
                run_id: run_id.to_owned(),
                page_size: 1000,
                ..ListCheckpointsRequest::default()
            })
            .await
            .map(|reply| reply.into_inner().checkpoints.iter().map(|c| c.step).max())
            .unwrap_or(None);
        if let Some(latest) = latest.filter(|&latest| latest >= step) {
            return Ok(latest);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("the first worker never checkpointed step {step}").into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn get(clients: &Clients, task_id: &str) -> Result<Task, BoxError> {
    clients
        .tasks
        .clone()
        .get(GetRequest {
            task_id: task_id.to_owned(),
        })
        .await?
        .into_inner()
        .task
        .ok_or_else(|| "Get returned no task".into())
}

/// What the second worker reported about the run.
#[derive(Debug, PartialEq)]
pub struct Events {
    pub claimed_ms: f64,
    pub resumed_ms: f64,
    pub recovered_from_step: i64,
    pub first_saved_ms: f64,
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
}

impl Events {
    /// The first `claimed`, `resumed` and (after it) `saved` events of `run_id`.
    pub fn parse(lines: &[String], run_id: &str) -> Result<Self, BoxError> {
        let event = |name: &str| {
            let prefix = format!("event {name} ");
            lines
                .iter()
                .position(|line| line.starts_with(&prefix) && field(line, "run") == Some(run_id))
        };
        let at = |index: usize| -> Result<f64, BoxError> {
            field(&lines[index], "at_ms")
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("no at_ms in {:?}", lines[index]).into())
        };
        let missing = |name: &str| format!("the second worker printed no `event {name}` line");
        let claimed = event("claimed").ok_or_else(|| missing("claimed"))?;
        let resumed = event("resumed").ok_or_else(|| missing("resumed"))?;
        let saved = lines[resumed..]
            .iter()
            .position(|line| line.starts_with("event saved ") && field(line, "run") == Some(run_id))
            .map(|offset| resumed + offset)
            .ok_or_else(|| missing("saved"))?;
        Ok(Self {
            claimed_ms: at(claimed)?,
            resumed_ms: at(resumed)?,
            recovered_from_step: field(&lines[resumed], "recovered_from_step")
                .and_then(|v| v.parse().ok())
                .ok_or("no recovered_from_step in the resumed event")?,
            first_saved_ms: at(saved)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_from_the_second_workers_stdout() {
        let lines: Vec<String> = [
            "event claimed run=other task=t0 attempt=1 at_ms=5",
            "event claimed run=r task=t1 attempt=2 at_ms=1000",
            "event saved run=r step=9 at_ms=1001",
            "event resumed run=r recovered_from_step=3 restarted_from_scratch=false epoch=2 skipped=[] at_ms=1004",
            "event saved run=r step=4 at_ms=1010",
            "event saved run=r step=5 at_ms=1011",
            "event finished run=r task=t1 end=Completed",
        ]
        .map(String::from)
        .to_vec();
        let events = Events::parse(&lines, "r").unwrap();
        assert_eq!(
            events,
            Events {
                claimed_ms: 1000.0,
                resumed_ms: 1004.0,
                recovered_from_step: 3,
                first_saved_ms: 1010.0,
            }
        );
        assert!(Events::parse(&lines[..3], "r").is_err());
    }

    #[test]
    fn the_breakdown_adds_up_to_the_total() {
        let r = Recovery {
            killed_after_step: 2,
            recovered_from_step: 2,
            killed_ms: 10_000.0,
            expires_ms: 10_800.0,
            renewed_at_kill: false,
            claimed_ms: 10_830.0,
            resumed_ms: 10_834.0,
            first_saved_ms: 10_840.0,
        };
        assert_eq!(r.detection(), 800.0);
        assert_eq!(r.claim(), 30.0);
        assert_eq!(r.resume(), 4.0);
        assert_eq!(r.first_step(), 6.0);
        assert_eq!(r.detection() + r.claim() + r.resume(), r.to_resumed());
        assert_eq!(r.to_resumed() + r.first_step(), r.to_first_step());
    }
}
