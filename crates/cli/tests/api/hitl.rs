//! Human approval that stays parked when asked (`--auto-resume-hitl false`), as real
//! processes: the server, the worker and the operator's `checkpointd tasks` commands.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{EnqueueRequest, GetRequest, Task, TaskState};
use tonic::transport::Channel;

use crate::support::{self, PgSchema, ServerProcess, WorkerProcess, channel, wait_until};

const PARKED_RUN: &str = "hitl-parked";
const CANARY_RUN: &str = "hitl-canary";

/// How long a running worker is watched not claiming the parked task, after it has proved it
/// claims (the canary): many of its 50 ms polls.
const WATCH: Duration = Duration::from_secs(1);

async fn tasks(server: &ServerProcess) -> TaskServiceClient<Channel> {
    TaskServiceClient::new(channel(server.addr).await)
}

async fn enqueue(client: &mut TaskServiceClient<Channel>, run_id: &str, steps: u64) -> Task {
    let request = EnqueueRequest {
        run_id: run_id.into(),
        input: format!("{{\"steps\":{steps}}}").into_bytes(),
        ..EnqueueRequest::default()
    };
    client
        .enqueue(request)
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

async fn get(client: &mut TaskServiceClient<Channel>, task_id: &str) -> Task {
    let request = GetRequest {
        task_id: task_id.into(),
    };
    client
        .get(request)
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

/// Runs `checkpointd ARGS --server http://ADDR` and returns its stdout, failing on an error.
fn cli(addr: SocketAddr, args: &[&str]) -> String {
    support::stdout_of(&support::cli(addr, args))
}

/// How many times the demo agent's email tool ran for `call` of `run_id`.
fn emails_sent(spool: &Path, run_id: &str, call: &str) -> usize {
    let text = std::fs::read_to_string(spool).unwrap_or_default();
    let line = format!("{run_id} {call}");
    text.lines().filter(|l| *l == line).count()
}

#[tokio::test]
async fn an_approved_task_stays_parked_across_a_restart_until_resumed_and_its_tool_runs_once() {
    let schema = PgSchema::create().await;
    let mut server = ServerProcess::start(&schema.url(), &["--auto-resume-hitl", "false"]);
    let mut client = tasks(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    let spool_flag = spool.to_str().unwrap();
    let parked = enqueue(&mut client, PARKED_RUN, 4).await;
    assert!(!parked.auto_resume_hitl, "the server's default applies");
    let mut first = WorkerProcess::start(
        server.addr,
        &["--approval-at-step", "2", "--side-effect-file", spool_flag],
    );
    // A parked task does not end a worker's run: stop it once the task waits for approval.
    wait_until("the task parked for approval", || {
        let mut client = client.clone();
        let id = parked.task_id.clone();
        async move { get(&mut client, &id).await.state == TaskState::InputRequired as i32 }
    })
    .await;
    assert!(first.terminate().success());
    let waiting = get(&mut client, &parked.task_id).await;
    assert_eq!(waiting.state, TaskState::InputRequired as i32);
    assert_eq!(emails_sent(&spool, PARKED_RUN, "step-1/send_email"), 1);
    assert_eq!(emails_sent(&spool, PARKED_RUN, "step-2/send_email"), 0);

    let approved = cli(
        server.addr,
        &["tasks", "approve", &parked.task_id, "--by", "alice"],
    );
    assert!(
        approved.contains("approved by alice; now input_required"),
        "{approved}"
    );
    let shown = cli(server.addr, &["tasks", "show", &parked.task_id]);
    assert!(shown.contains("parked until `tasks resume"), "{shown}");

    // The restarted server defaults to resuming by itself: the task keeps the setting it was
    // enqueued with, so nothing parked starts.
    assert!(server.terminate().success());
    server = ServerProcess::start(&schema.url(), &[]);
    let mut client = tasks(&server).await;
    let after_restart = get(&mut client, &parked.task_id).await;
    assert_eq!(after_restart.state, TaskState::InputRequired as i32);
    assert!(after_restart.approval.as_ref().unwrap().approved);

    // A running worker claims what it may (the canary proves it polls) but never the parked task.
    let canary = enqueue(&mut client, CANARY_RUN, 1).await;
    let worker = WorkerProcess::start(
        server.addr,
        &["--approval-at-step", "2", "--side-effect-file", spool_flag],
    );
    wait_until("the canary task completed", || {
        let mut client = client.clone();
        let id = canary.task_id.clone();
        async move { get(&mut client, &id).await.state == TaskState::Completed as i32 }
    })
    .await;
    let watched_until = Instant::now() + WATCH;
    while Instant::now() < watched_until {
        let task = get(&mut client, &parked.task_id).await;
        assert_eq!(
            (task.state, task.attempt),
            (TaskState::InputRequired as i32, waiting.attempt),
            "a worker claimed the parked task"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let claimed_parked = format!("event claimed run={PARKED_RUN} ");
    assert!(
        !worker
            .lines()
            .iter()
            .any(|l| l.starts_with(&claimed_parked))
    );

    let resumed = cli(server.addr, &["tasks", "resume", &parked.task_id]);
    assert!(resumed.contains("resumed; now pending"), "{resumed}");
    wait_until("the resumed task completed", || {
        let mut client = client.clone();
        let id = parked.task_id.clone();
        async move { get(&mut client, &id).await.state == TaskState::Completed as i32 }
    })
    .await;
    drop(worker);

    assert_eq!(emails_sent(&spool, PARKED_RUN, "step-2/send_email"), 1);
    for call in ["step-1/send_email", "step-4/send_email"] {
        assert_eq!(emails_sent(&spool, PARKED_RUN, call), 1, "{call}");
    }
}
