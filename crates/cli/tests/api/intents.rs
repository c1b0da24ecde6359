//! Side effects exactly once across a crash between the effect and its journalled result: real
//! `checkpointd worker` processes abort right after the demo email is sent, and a second worker
//! settles the in-doubt call by the tool's policy (retry with the key, ask a human, fail).

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ClientCapability, EnqueueRequest, GetRequest, ResumeRequest, Task, TaskState,
};

use crate::support::{PgSchema, ServerProcess, WorkerProcess, channel, cli, stdout_of, wait_until};

/// The call the demo agent's step-2 email makes.
const STEP_2_EMAIL: &str = "step-2/send_email/0";

/// Enqueues a 4-step demo task: emails at steps 1, 2 and 4.
pub(crate) async fn enqueue(server: SocketAddr, run_id: &str) -> Task {
    TaskServiceClient::new(channel(server).await)
        .enqueue(EnqueueRequest {
            run_id: run_id.into(),
            input: br#"{"steps":4}"#.to_vec(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

pub(crate) async fn get(server: SocketAddr, task_id: &str) -> Task {
    TaskServiceClient::new(channel(server).await)
        .get(GetRequest {
            task_id: task_id.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

/// Runs a worker process until it exits (by aborting, or after `--exit-after`).
pub(crate) async fn run_worker(server: SocketAddr, flags: Vec<String>) -> WorkerProcess {
    tokio::task::spawn_blocking(move || {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let mut worker = WorkerProcess::start(server, &flags);
        worker.wait();
        worker
    })
    .await
    .unwrap()
}

/// Runs a worker process until the task `task_id` waits in input_required, then stops it: a
/// parked task does not count towards `--exit-after`.
pub(crate) async fn run_worker_until_parked(server: SocketAddr, flags: Vec<String>, task_id: &str) {
    let flags_ref: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut worker = WorkerProcess::start(server, &flags_ref);
    let id = task_id.to_owned();
    wait_until("the task parked in input_required", || {
        let id = id.clone();
        async move { get(server, &id).await.state == TaskState::InputRequired as i32 }
    })
    .await;
    assert!(
        tokio::task::spawn_blocking(move || worker.terminate().success())
            .await
            .unwrap()
    );
}

/// A demo worker's flags: short leases, a checkpoint every step, `spool` for the emails.
pub(crate) fn flags(spool: &Path, policy: &str, extra: &[&str]) -> Vec<String> {
    let mut flags: Vec<String> = [
        "--lease",
        "1s",
        "--strategy",
        "every_step",
        "--side-effect-file",
        spool.to_str().unwrap(),
        "--in-doubt",
        policy,
    ]
    .iter()
    .map(|flag| flag.to_string())
    .collect();
    flags.extend(extra.iter().map(|flag| flag.to_string()));
    flags
}

/// The spool's lines for one run: one per email sent.
fn emails(spool: &Path, run_id: &str) -> Vec<String> {
    std::fs::read_to_string(spool)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.starts_with(&format!("{run_id} ")))
        .map(str::to_owned)
        .collect()
}

/// A worker that aborts right after step 2's email, before its result is journalled.
async fn crash_after_the_email(server: &ServerProcess, spool: &Path, policy: &str) {
    let crashed = run_worker(
        server.addr,
        flags(spool, policy, &["--crash-after-side-effect-at-step", "2"]),
    )
    .await;
    assert!(
        crashed
            .lines()
            .iter()
            .any(|line| line.starts_with("event crashing")),
        "{:?}",
        crashed.lines()
    );
}

#[tokio::test]
async fn retry_with_key_sends_the_email_once_across_a_crash_after_it() {
    let schema = PgSchema::create().await;
    let server = ServerProcess::start(&schema.url(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    let task = enqueue(server.addr, "retry-run").await;
    crash_after_the_email(&server, &spool, "retry_with_key").await;
    assert_eq!(emails(&spool, "retry-run").len(), 2, "steps 1 and 2 sent");

    // The crash left step 2's call in doubt: an intent, no result.
    let resumed = CheckpointServiceClient::new(channel(server.addr).await)
        .resume(ResumeRequest {
            run_id: "retry-run".into(),
            capabilities: vec![ClientCapability::InDoubtCalls as i32],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let in_doubt: Vec<&str> = resumed
        .in_doubt
        .iter()
        .map(|c| c.call_id.as_str())
        .collect();
    assert_eq!(in_doubt, [STEP_2_EMAIL]);
    assert!(!resumed.in_doubt[0].idempotency_key.is_empty());

    run_worker(
        server.addr,
        flags(&spool, "retry_with_key", &["--exit-after", "1"]),
    )
    .await;
    let done = get(server.addr, &task.task_id).await;
    assert_eq!(done.state, TaskState::Completed as i32, "{done:?}");
    // Steps 1, 2 and 4 send an email (3 is a multiple of 3), each exactly once.
    let sent = emails(&spool, "retry-run");
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent.iter().collect::<HashSet<_>>().len(), 3, "{sent:?}");
}

#[tokio::test]
async fn ask_parks_the_in_doubt_call_and_the_operators_decision_finishes_it_once() {
    let schema = PgSchema::create().await;
    let server = ServerProcess::start(&schema.url(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    let task = enqueue(server.addr, "ask-run").await;
    crash_after_the_email(&server, &spool, "ask").await;

    run_worker_until_parked(server.addr, flags(&spool, "ask", &[]), &task.task_id).await;
    let parked = get(server.addr, &task.task_id).await;
    assert_eq!(parked.state, TaskState::InputRequired as i32, "{parked:?}");
    let approval = parked.approval.unwrap();
    assert_eq!(approval.action, format!("in_doubt {STEP_2_EMAIL}"));
    assert!(String::from_utf8_lossy(&approval.details).contains("idempotency_key"));

    let journal = stdout_of(&cli(server.addr, &["runs", "journal", "ask-run"]));
    assert!(
        journal.contains(&format!("in doubt: {STEP_2_EMAIL}")),
        "{journal}"
    );
    // The operator checked the mail provider: the email went out. Mark the call done.
    let repaired = stdout_of(&cli(
        server.addr,
        &[
            "runs",
            "journal",
            "ask-run",
            "--mark-done",
            STEP_2_EMAIL,
            "--output",
            r#"{"sent":true}"#,
            "--by",
            "alice",
        ],
    ));
    assert!(repaired.contains("mark_done"), "{repaired}");
    stdout_of(&cli(
        server.addr,
        &["tasks", "approve", &task.task_id, "--by", "alice"],
    ));
    let journal = stdout_of(&cli(server.addr, &["runs", "journal", "ask-run", "--json"]));
    let journal: serde_json::Value = serde_json::from_str(&journal).unwrap();
    assert_eq!(
        journal["in_doubt"].as_array().unwrap().len(),
        0,
        "{journal}"
    );
    assert_eq!(journal["actions"][0]["actor"], "alice", "{journal}");

    run_worker(server.addr, flags(&spool, "ask", &["--exit-after", "1"])).await;
    let done = get(server.addr, &task.task_id).await;
    assert_eq!(done.state, TaskState::Completed as i32, "{done:?}");
    let sent = emails(&spool, "ask-run");
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent.iter().collect::<HashSet<_>>().len(), 3, "{sent:?}");
}

#[tokio::test]
async fn fail_fails_the_task_naming_the_in_doubt_call() {
    let schema = PgSchema::create().await;
    let server = ServerProcess::start(&schema.url(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    let task = enqueue(server.addr, "fail-run").await;
    crash_after_the_email(&server, &spool, "fail").await;

    run_worker(server.addr, flags(&spool, "fail", &["--exit-after", "1"])).await;
    let failed = get(server.addr, &task.task_id).await;
    assert_eq!(failed.state, TaskState::Failed as i32, "{failed:?}");
    assert!(
        failed.last_error.contains(STEP_2_EMAIL),
        "{}",
        failed.last_error
    );
    assert_eq!(emails(&spool, "fail-run").len(), 2, "nothing ran again");
}
