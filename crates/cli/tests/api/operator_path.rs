//! The operator's path, tried as a new operator would with the real binary: what `runs show`
//! claims about integrity and pins, a checkpoint's content, resuming and re-driving a run,
//! `worker --exit-after` with approvals, pipes closed early, a taken admin port, the demo.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use checkpointd::proto::{
    ClaimRequest, CompleteRequest, EnqueueRequest, GetRequest, RequestApprovalRequest, Task,
    TaskState,
};
use serde_json::{Value, json};

use crate::support::{
    Backend, ServerProcess, TestApp, WorkerProcess, requests, spawn_app, wait_until,
};
use crate::support::{cli, stdout_of};

const RUN: &str = "run-under-care";

/// Saves steps 1..=3 of [`RUN`], one message each, JSON state `{"step":N}`.
async fn save_three_steps(app: &TestApp) {
    let mut client = app.client().await;
    for step in 1..=3 {
        let mut request = requests::save(RUN, step, format!("{{\"step\":{step}}}").as_bytes());
        request.messages = vec![requests::message("assistant", &format!("step {step} done"))];
        request.message_offset = step as u64 - 1;
        client.save(request).await.unwrap();
    }
}

/// Enqueues a task for `run`, claims it and parks it for approval; its id.
async fn park_for_approval(app: &TestApp, run: &str) -> String {
    let mut tasks = app.tasks().await;
    tasks
        .enqueue(EnqueueRequest {
            run_id: run.to_owned(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap();
    let claimed = claim(app, Duration::from_secs(30)).await;
    tasks
        .request_approval(RequestApprovalRequest {
            task_id: claimed.task_id.clone(),
            attempt: claimed.attempt,
            action: "send_email".to_owned(),
            details: Vec::new(),
        })
        .await
        .unwrap();
    claimed.task_id
}

async fn claim(app: &TestApp, lease: Duration) -> Task {
    app.tasks()
        .await
        .claim(ClaimRequest {
            worker_id: "worker-1".to_owned(),
            batch_size: 1,
            lease_duration: prost_types::Duration::try_from(lease).ok(),
        })
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0)
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout_of(output)).unwrap()
}

/// The table row of `step` in `runs show` output.
fn row(table: &str, step: i64) -> &str {
    table
        .lines()
        .find(|line| line.split_whitespace().next() == Some(&step.to_string()))
        .unwrap_or_else(|| panic!("no row for step {step}:\n{table}"))
}

// Multi-threaded: the CLI runs as a blocking child process while this runtime serves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_show_says_unverified_until_verify_tells_valid_from_corrupt() {
    let app = spawn_app(Backend::Sqlite).await;
    save_three_steps(&app).await;
    app.corrupt_state(RUN, 2).await;

    // Nothing has looked at the bytes yet: the corrupt row must not pass for valid.
    let table = stdout_of(&cli(app.addr, &["runs", "show", RUN]));
    for step in 1..=3 {
        assert!(row(&table, step).ends_with(" unverified"), "{table}");
    }
    assert!(table.contains("--verify"), "{table}");

    let verified = stdout_of(&cli(app.addr, &["runs", "show", RUN, "--verify"]));
    assert!(
        verified.starts_with("verified 3 checkpoints: 2 valid, 1 corrupt"),
        "{verified}"
    );
    assert!(row(&verified, 1).ends_with(" valid"), "{verified}");
    assert!(
        row(&verified, 2).contains(" corrupt: checksum mismatch"),
        "{verified}"
    );
    assert!(row(&verified, 3).ends_with(" valid"), "{verified}");

    // The verdict stays as a quarantine; the others are unverified again for the next look.
    let listing = json_of(&cli(app.addr, &["runs", "show", RUN, "--json"]));
    let statuses: Vec<&str> = listing["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["unverified", "quarantined", "unverified"],
        "{listing}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_show_names_who_pins_each_checkpoint() {
    let app = spawn_app(Backend::Sqlite).await;
    save_three_steps(&app).await;
    let task_id = park_for_approval(&app, RUN).await;
    stdout_of(&cli(app.addr, &["runs", "pin", RUN, "1"]));

    let table = stdout_of(&cli(app.addr, &["runs", "show", RUN]));
    assert!(
        table.lines().next().unwrap().contains("PINNED_BY"),
        "{table}"
    );
    assert!(row(&table, 1).contains(" operator "), "{table}");
    assert!(row(&table, 2).contains(" - "), "{table}");
    assert!(
        row(&table, 3).contains(&format!(" approval:{task_id} ")),
        "{table}"
    );

    let listing = json_of(&cli(app.addr, &["runs", "show", RUN, "--json"]));
    let pins: Vec<&Value> = listing["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row["pinned_by"])
        .collect();
    assert_eq!(
        pins,
        [
            &json!(["operator"]),
            &json!([]),
            &json!([format!("approval:{task_id}")])
        ]
    );

    // Another tenant's run of the same name shows none of these pins.
    let mut other = app.client().await;
    other
        .save(crate::support::for_tenant(
            "acme",
            requests::save(RUN, 1, b"{}"),
        ))
        .await
        .unwrap();
    let foreign = json_of(&cli(
        app.addr,
        &["runs", "show", RUN, "--tenant", "acme", "--json"],
    ));
    assert_eq!(
        foreign["checkpoints"][0]["pinned_by"],
        json!([]),
        "{foreign}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_show_step_payload_prints_the_state_messages_and_journal() {
    let app = spawn_app(Backend::Sqlite).await;
    save_three_steps(&app).await;
    let mut client = app.client().await;
    client
        .record_tool_result(requests::tool(RUN, "step-2/send_email/0", 2, "sent"))
        .await
        .unwrap();

    let text = stdout_of(&cli(
        app.addr,
        &["runs", "show", RUN, "--step", "2", "--payload"],
    ));
    assert!(
        text.contains("state (10 bytes, json):\n{\n  \"step\": 2\n}"),
        "{text}"
    );
    assert!(text.contains("assistant  step 1 done"), "{text}");
    assert!(text.contains("assistant  step 2 done"), "{text}");
    assert!(!text.contains("step 3 done"), "{text}");
    assert!(
        text.contains("step-2/send_email/0  step 2  ok  sent"),
        "{text}"
    );

    let payload = json_of(&cli(
        app.addr,
        &["runs", "show", RUN, "--step", "2", "--payload", "--json"],
    ));
    assert_eq!(payload["state"], json!({ "step": 2 }), "{payload}");
    assert_eq!(payload["state_encoding"], "json");
    assert_eq!(payload["messages"][1]["content"], "step 2 done");
    assert_eq!(payload["tool_results"][0]["call_id"], "step-2/send_email/0");
    assert_eq!(payload["tool_results"][0]["output"], "sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_resume_enqueue_queues_a_task_and_json_lists_the_tool_results() {
    let app = spawn_app(Backend::Sqlite).await;
    save_three_steps(&app).await;
    let mut client = app.client().await;
    client
        .record_tool_result(requests::tool(RUN, "step-3/send_email/0", 3, "sent"))
        .await
        .unwrap();

    let resumed = json_of(&cli(
        app.addr,
        &[
            "runs",
            "resume",
            RUN,
            "--enqueue",
            "--input",
            "{\"steps\":5}",
            "--json",
        ],
    ));
    let tools = resumed["tool_results"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{resumed}");
    assert_eq!(tools[0]["call_id"], "step-3/send_email/0");
    assert_eq!(tools[0]["tool_name"], "send_email");
    assert_eq!(tools[0]["step"], 3);
    assert_eq!(tools[0]["output"], "sent");

    let task_id = resumed["enqueued_task_id"].as_str().unwrap().to_owned();
    let task = app
        .tasks()
        .await
        .get(GetRequest { task_id })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(
        (task.run_id.as_str(), task.state),
        (RUN, TaskState::Pending as i32)
    );
    assert_eq!(task.input, b"{\"steps\":5}");

    // The text form says the task's id, and without --enqueue how to get one.
    let text = stdout_of(&cli(app.addr, &["runs", "resume", RUN, "--enqueue"]));
    assert!(text.contains("enqueued "), "{text}");
    let text = stdout_of(&cli(app.addr, &["runs", "resume", RUN]));
    assert!(text.contains("none enqueued"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_task_shows_no_error_of_an_earlier_attempt() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut tasks = app.tasks().await;
    tasks
        .enqueue(EnqueueRequest {
            run_id: RUN.to_owned(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap();
    let first = claim(&app, Duration::from_secs(30)).await;
    app.expire_lease(&first.task_id).await;
    let second = claim(&app, Duration::from_secs(30)).await;
    assert!(second.last_error.contains("expired"), "{second:?}");
    tasks
        .complete(CompleteRequest {
            task_id: second.task_id.clone(),
            attempt: second.attempt,
            result: b"done".to_vec(),
        })
        .await
        .unwrap();

    let shown = stdout_of(&cli(app.addr, &["tasks", "show", &second.task_id]));
    assert!(shown.contains("completed"), "{shown}");
    assert!(!shown.contains("expired"), "{shown}");
}

/// The worker parks the task for approval and must keep running: the task has not ended.
#[tokio::test]
async fn worker_exit_after_does_not_count_a_task_parked_for_approval() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &format!("sqlite://{}", dir.path().join("q.db").display()),
        &[],
    );
    let task_id = stdout_of(&cli(
        server.addr,
        &[
            "tasks",
            "enqueue",
            "--run",
            "hitl-once",
            "--input",
            "{\"steps\":3}",
            "--json",
        ],
    ));
    let task_id: Value = serde_json::from_str(&task_id).unwrap();
    let task_id = task_id["task"]["task_id"].as_str().unwrap().to_owned();
    let mut worker = WorkerProcess::start(
        server.addr,
        &["--approval-at-step", "2", "--exit-after", "1"],
    );
    let addr = server.addr;
    let parked = task_id.clone();
    wait_until("the task waits for approval", move || {
        let shown = stdout_of(&cli(addr, &["tasks", "show", &parked, "--json"]));
        async move { shown.contains("\"input_required\"") }
    })
    .await;

    stdout_of(&cli(
        server.addr,
        &["tasks", "approve", &task_id, "--by", "alice"],
    ));
    // The same worker claims it again, finishes it, and only then exits.
    assert!(worker.wait().success());
    let shown = stdout_of(&cli(server.addr, &["tasks", "show", &task_id, "--json"]));
    assert!(shown.contains("\"completed\""), "{shown}");
}

/// Every command that prints ends quietly when its reader has gone: no panic, no backtrace.
#[tokio::test]
async fn a_reader_that_closes_early_ends_every_printing_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("p.db").display());
    let server = ServerProcess::start(&database, &[]);
    stdout_of(&cli(server.addr, &["tasks", "enqueue", "--run", RUN]));
    crate::support::connect(server.addr)
        .await
        .save(requests::save(RUN, 1, b"{}"))
        .await
        .unwrap();
    let server_url = format!("http://{}", server.addr);
    let addr = server.addr.to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["tasks", "list", "--server", &server_url],
        vec!["tasks", "enqueue", "--run", RUN, "--server", &server_url],
        vec!["runs", "show", RUN, "--server", &server_url],
        vec!["health", "--addr", &addr],
        vec!["prune", "--dry-run", "--database", &database],
        vec!["scrub", "--database", &database],
        vec!["demo", "--steps", "1", "--latency-saves", "0"],
    ];
    for args in commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_checkpointd"))
            .args(&args)
            .env_remove("CHECKPOINTD_SERVER")
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader closes before the first line is written.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let quiet_end = output.status.success() || output.status.signal() == Some(libc_sigpipe());
        assert!(quiet_end, "{args:?} ended with {}: {stderr}", output.status);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

/// SIGPIPE's number on Linux and the BSDs alike.
fn libc_sigpipe() -> i32 {
    13
}

#[tokio::test]
async fn a_second_serve_names_the_listener_whose_address_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let first = ServerProcess::start(
        &format!("sqlite://{}", dir.path().join("a.db").display()),
        &[],
    );
    let second_db = format!("sqlite://{}", dir.path().join("b.db").display());
    let serve = |listen: &str, admin: &str| {
        Command::new(env!("CARGO_BIN_EXE_checkpointd"))
            .args(["serve", "--listen", listen, "--admin-listen", admin])
            .args(["--database", &second_db])
            .env_remove("CHECKPOINTD_LISTEN")
            .env_remove("CHECKPOINTD_ADMIN_LISTEN")
            .output()
            .unwrap()
    };
    // Only --listen changed: the admin port is the one taken.
    let output = serve("127.0.0.1:0", &first.admin_addr.to_string());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let expected = format!(
        "cannot listen on {} (--admin-listen / CHECKPOINTD_ADMIN_LISTEN): address already in use",
        first.admin_addr
    );
    assert!(stderr.contains(&expected), "{stderr}");

    let output = serve(&first.addr.to_string(), "127.0.0.1:0");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let expected = format!(
        "cannot listen on {} (--listen / CHECKPOINTD_LISTEN): address already in use",
        first.addr
    );
    assert!(stderr.contains(&expected), "{stderr}");
}

#[tokio::test]
async fn the_demo_reports_save_latency_with_its_sample_size() {
    let output = Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args(["demo", "--latency-saves", "40"])
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let printed = stdout_of(&output);
    let worker_two = printed
        .lines()
        .find(|line| line.starts_with("latency of worker 2"))
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(worker_two.contains("(n="), "{worker_two}");
    let measured = printed
        .lines()
        .find(|line| line.starts_with("per-save latency"))
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(measured.contains("(n=40 saves of "), "{measured}");
    assert!(
        printed.contains("ok: every tool call ran exactly once"),
        "{printed}"
    );
}
