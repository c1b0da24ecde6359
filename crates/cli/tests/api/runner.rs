//! The bundled runner as real processes: crashes (SIGKILL), contention, error classes, human
//! approval across a server restart, and graceful shutdown.

use std::collections::HashSet;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ApproveRequest, EnqueueRequest, GetRequest, ListCheckpointsRequest, ListRequest,
    LoadLatestRequest, RejectRequest, Task, TaskState,
};
use tonic::transport::Channel;

use crate::support::{PgSchema, ServerProcess, WorkerProcess, channel};

/// Polls an external condition (another process's progress) until it holds, for at most `limit`.
async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

struct Clients {
    checkpoints: CheckpointServiceClient<Channel>,
    tasks: TaskServiceClient<Channel>,
}

async fn clients(server: &ServerProcess) -> Clients {
    let channel = channel(server.addr).await;
    Clients {
        checkpoints: CheckpointServiceClient::new(channel.clone()),
        tasks: TaskServiceClient::new(channel),
    }
}

async fn enqueue(clients: &mut Clients, run_id: &str, steps: u64) -> Task {
    clients
        .tasks
        .enqueue(EnqueueRequest {
            run_id: run_id.into(),
            input: format!("{{\"steps\":{steps}}}").into_bytes(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

async fn get(clients: &mut Clients, task_id: &str) -> Task {
    clients
        .tasks
        .get(GetRequest {
            task_id: task_id.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

async fn has_checkpoint(
    mut checkpoints: CheckpointServiceClient<Channel>,
    run_id: &str,
    step: i64,
) -> bool {
    checkpoints
        .list_checkpoints(ListCheckpointsRequest {
            run_id: run_id.into(),
            ..Default::default()
        })
        .await
        .map(|reply| {
            reply
                .into_inner()
                .checkpoints
                .iter()
                .any(|c| c.step >= step)
        })
        .unwrap_or(false)
}

/// (executions, distinct calls) recorded in a demo agent's side-effect file.
fn side_effects(path: &Path) -> (usize, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    (
        text.lines().count(),
        text.lines().collect::<HashSet<_>>().len(),
    )
}

async fn wait_for_exit(mut worker: WorkerProcess) -> WorkerProcess {
    tokio::task::spawn_blocking(move || {
        worker.wait();
        worker
    })
    .await
    .unwrap()
}

fn resumed_from(worker: &WorkerProcess) -> Vec<i64> {
    worker
        .lines()
        .iter()
        .filter(|line| line.starts_with("event resumed"))
        .filter_map(|line| {
            line.split_whitespace()
                .find_map(|part| part.strip_prefix("recovered_from_step="))
                .and_then(|step| step.parse().ok())
        })
        .collect()
}

#[tokio::test]
async fn a_killed_worker_is_resumed_by_another_and_no_tool_runs_twice() {
    let schema = PgSchema::create().await;
    let server = ServerProcess::start(&schema.url(), &[]);
    let mut clients = clients(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    let spool_arg = spool.to_str().unwrap();
    let task = enqueue(&mut clients, "crash-run", 10).await;
    let flags = [
        "--lease",
        "1s",
        "--strategy",
        "every_n:3",
        "--step-delay",
        "150ms",
        "--side-effect-file",
        spool_arg,
    ];

    let mut first = WorkerProcess::start(server.addr, &flags);
    eventually(Duration::from_secs(30), "the step-3 checkpoint", || {
        has_checkpoint(clients.checkpoints.clone(), "crash-run", 3)
    })
    .await;
    first.kill9();

    let second = WorkerProcess::start(server.addr, &[&flags[..], &["--exit-after", "1"]].concat());
    let second = wait_for_exit(second).await;
    assert_eq!(resumed_from(&second), vec![3], "{:?}", second.lines());
    let done = get(&mut clients, &task.task_id).await;
    assert_eq!(done.state, TaskState::Completed as i32, "{done:?}");
    assert_eq!(done.attempt, 2);
    // Steps 1..=10 send an email unless the step is a multiple of 3: 7 distinct calls.
    assert_eq!(side_effects(&spool), (7, 7));
}

#[tokio::test]
async fn five_hundred_tasks_across_two_worker_processes_complete_exactly_once() {
    let schema = PgSchema::create().await;
    let server = ServerProcess::start(&schema.url(), &[]);
    let mut clients = clients(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    for i in 0..500 {
        enqueue(&mut clients, &format!("bulk-{i}"), 1).await;
    }
    let flags = [
        "--concurrency",
        "4",
        "--strategy",
        "every_step",
        "--side-effect-file",
        spool.to_str().unwrap(),
    ];
    let mut workers = [
        WorkerProcess::start(server.addr, &flags),
        WorkerProcess::start(server.addr, &flags),
    ];

    let completed = |clients: &mut Clients| {
        let mut tasks = clients.tasks.clone();
        async move {
            let mut all = Vec::new();
            let mut token = String::new();
            loop {
                let page = tasks
                    .list(ListRequest {
                        state: TaskState::Completed as i32,
                        page_size: 1000,
                        page_token: token,
                    })
                    .await
                    .unwrap()
                    .into_inner();
                all.extend(page.tasks);
                if page.next_page_token.is_empty() {
                    return all;
                }
                token = page.next_page_token;
            }
        }
    };
    eventually(Duration::from_secs(180), "500 completed tasks", || {
        let listing = completed(&mut clients);
        async move { listing.await.len() == 500 }
    })
    .await;
    for worker in &mut workers {
        assert!(worker.terminate().success());
    }
    let done = completed(&mut clients).await;
    assert!(
        done.iter().all(|task| task.attempt == 1),
        "a task was claimed twice"
    );
    assert_eq!(side_effects(&spool), (500, 500));
    assert!(
        workers
            .iter()
            .all(|w| w.lines().iter().any(|l| l.starts_with("summary")))
    );
}

#[tokio::test]
async fn a_fatal_error_fails_at_once_and_a_transient_one_resurrects_then_retries() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &format!("sqlite://{}", dir.path().join("q.db").display()),
        &[],
    );
    let mut clients = clients(&server).await;

    let fatal = enqueue(&mut clients, "fatal-run", 5).await;
    let worker = WorkerProcess::start(server.addr, &["--fatal-at-step", "2", "--exit-after", "1"]);
    let worker = wait_for_exit(worker).await;
    let failed = get(&mut clients, &fatal.task_id).await;
    assert_eq!(
        (failed.state, failed.attempts_used),
        (TaskState::Failed as i32, 1)
    );
    assert!(
        failed.last_error.contains("invalid credentials"),
        "{}",
        failed.last_error
    );
    assert_eq!(
        resumed_from(&worker).len(),
        1,
        "a fatal error must not be retried"
    );

    let flaky = enqueue(&mut clients, "flaky-run", 5).await;
    let worker = WorkerProcess::start(
        server.addr,
        &[
            "--transient-probability",
            "1.0",
            "--max-resurrections",
            "2",
            "--exit-after",
            "1",
        ],
    );
    let worker = wait_for_exit(worker).await;
    assert_eq!(
        resumed_from(&worker).len(),
        3,
        "one life plus two resurrections: {:?}",
        worker.lines()
    );
    let retrying = get(&mut clients, &flaky.task_id).await;
    assert_eq!(
        (retrying.state, retrying.attempts_used),
        (TaskState::Pending as i32, 1)
    );
    assert!(retrying.last_error.contains("simulated model timeout"));
}

#[tokio::test]
async fn approval_survives_a_server_restart_and_the_tool_runs_once() {
    let schema = PgSchema::create().await;
    let mut server = ServerProcess::start(&schema.url(), &[]);
    let mut clients = clients(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    let flags = [
        "--approval-at-step",
        "2",
        "--exit-after",
        "2",
        "--side-effect-file",
        spool.to_str().unwrap(),
    ];
    let approved = enqueue(&mut clients, "hitl-yes", 4).await;
    let rejected = enqueue(&mut clients, "hitl-no", 4).await;
    // Parked tasks have not ended, so --exit-after does not stop this worker: it is stopped
    // once both wait for a human.
    let mut parking = WorkerProcess::start(server.addr, &flags);
    let tasks = clients.tasks.clone();
    eventually(
        Duration::from_secs(30),
        "both tasks to wait for approval",
        || {
            let mut tasks = tasks.clone();
            let ids = [approved.task_id.clone(), rejected.task_id.clone()];
            async move {
                for task_id in ids {
                    let reply = tasks
                        .get(GetRequest { task_id })
                        .await
                        .unwrap()
                        .into_inner();
                    if reply.task.unwrap().state != TaskState::InputRequired as i32 {
                        return false;
                    }
                }
                true
            }
        },
    )
    .await;
    assert!(parking.terminate().success());
    for task in [&approved, &rejected] {
        let waiting = get(&mut clients, &task.task_id).await;
        assert_eq!(waiting.state, TaskState::InputRequired as i32);
        assert_eq!(waiting.approval.unwrap().action, "send_email step-2");
    }
    assert_eq!(
        side_effects(&spool),
        (2, 2),
        "only step 1's emails ran before the approvals"
    );

    // The server restarts while the humans think.
    assert!(server.terminate().success());
    let url = schema.url();
    server = ServerProcess::start(&url, &[]);
    let mut clients = self::clients(&server).await;
    clients
        .tasks
        .approve(ApproveRequest {
            task_id: approved.task_id.clone(),
            decided_by: "alice".into(),
            comment: "go".into(),
        })
        .await
        .unwrap();
    clients
        .tasks
        .reject(RejectRequest {
            task_id: rejected.task_id.clone(),
            decided_by: "bob".into(),
            comment: "not now".into(),
        })
        .await
        .unwrap();
    wait_for_exit(WorkerProcess::start(server.addr, &flags)).await;
    for task in [&approved, &rejected] {
        assert_eq!(
            get(&mut clients, &task.task_id).await.state,
            TaskState::Completed as i32
        );
    }
    let text = std::fs::read_to_string(&spool).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| *l == "hitl-yes step-2/send_email")
            .count(),
        1
    );
    assert_eq!(
        text.lines()
            .filter(|l| *l == "hitl-no step-2/send_email")
            .count(),
        0
    );
    assert_eq!(side_effects(&spool), (5, 5));
    let history = clients
        .checkpoints
        .load_latest(LoadLatestRequest {
            run_id: "hitl-no".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap()
        .messages;
    assert!(
        history
            .iter()
            .any(|m| m.content == b"send_email rejected by bob: not now")
    );
}

#[tokio::test]
async fn sigterm_checkpoints_and_releases_the_task_with_no_attempt_spent() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &format!("sqlite://{}", dir.path().join("q.db").display()),
        &[],
    );
    let mut clients = clients(&server).await;
    let task = enqueue(&mut clients, "drain-run", 50).await;
    let mut worker = WorkerProcess::start(
        server.addr,
        &["--strategy", "every_n:10", "--step-delay", "100ms"],
    );
    // Step 1 finished in the worker: a stop from here on has a step to checkpoint.
    eventually(
        Duration::from_secs(30),
        "the worker to finish step 1",
        || {
            let finished_step_one = worker
                .lines()
                .iter()
                .any(|line| line.starts_with("event step_completed run=drain-run step=1 "));
            async move { finished_step_one }
        },
    )
    .await;
    let running = get(&mut clients, &task.task_id).await;
    assert_eq!(running.state, TaskState::Running as i32, "{running:?}");
    assert!(worker.terminate().success());

    let released = get(&mut clients, &task.task_id).await;
    assert_eq!(released.state, TaskState::Pending as i32);
    assert_eq!(
        released.attempts_used, 0,
        "a graceful stop spends no attempt"
    );
    assert!(released.worker_id.is_empty());
    let saved = clients
        .checkpoints
        .load_latest(LoadLatestRequest {
            run_id: "drain-run".into(),
            ..Default::default()
        })
        .await
        .expect("the stopping worker checkpoints the steps it finished")
        .into_inner()
        .checkpoint
        .unwrap();
    assert!(
        saved.step >= 1 && saved.step < 10,
        "checkpointed at step {}",
        saved.step
    );
}
