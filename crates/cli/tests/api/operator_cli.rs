//! The operator CLI (`checkpointd tasks|runs ...`) run as a real process against a real server.

use std::net::SocketAddr;

use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ClaimRequest, EnqueueRequest, GetRequest, RequestApprovalRequest, TaskState,
};
use serde_json::Value;
use tonic::transport::Channel;

use crate::support::{self, ServerProcess, cli, requests, stdout_of};

const PARKED_RUN: &str = "run-needs-approval";
const SAVED_RUN: &str = "run-with-checkpoints";

/// A server seeded with one task parked for approval, one pending task and a run with three
/// checkpoints.
struct Seeded {
    server: ServerProcess,
    parked_task: String,
    _dir: tempfile::TempDir,
}

async fn seeded_server() -> Seeded {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("x.db").display());
    let server = ServerProcess::start(&url, &[]);
    let mut tasks = task_client(server.addr).await;
    tasks
        .enqueue(EnqueueRequest {
            run_id: PARKED_RUN.to_owned(),
            input: b"draft the email".to_vec(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap();
    let claimed = tasks
        .claim(ClaimRequest {
            worker_id: "worker-1".to_owned(),
            batch_size: 1,
            ..ClaimRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0);
    tasks
        .request_approval(RequestApprovalRequest {
            task_id: claimed.task_id.clone(),
            attempt: claimed.attempt,
            action: "send_email".to_owned(),
            details: br#"{"to":"bob@example.com"}"#.to_vec(),
        })
        .await
        .unwrap();
    tasks
        .enqueue(EnqueueRequest {
            run_id: "run-waiting".to_owned(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap();
    let mut checkpoints = support::connect(server.addr).await;
    for step in 1..=3 {
        checkpoints
            .save(requests::save(SAVED_RUN, step, br#"{"n":1}"#))
            .await
            .unwrap();
    }
    Seeded {
        server,
        parked_task: claimed.task_id,
        _dir: dir,
    }
}

async fn task_client(addr: SocketAddr) -> TaskServiceClient<Channel> {
    TaskServiceClient::new(support::channel(addr).await)
}

#[tokio::test]
async fn tasks_list_input_required_json_shows_the_parked_task_and_its_action() {
    let seeded = seeded_server().await;
    let output = cli(
        seeded.server.addr,
        &["tasks", "list", "--state", "input_required", "--json"],
    );
    let listing: Value = serde_json::from_str(&stdout_of(&output)).unwrap();
    let tasks = listing["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{listing}");
    assert_eq!(tasks[0]["task_id"], seeded.parked_task.as_str());
    assert_eq!(tasks[0]["state"], "input_required");
    assert_eq!(tasks[0]["approval"]["action"], "send_email");
    assert_eq!(
        tasks[0]["approval"]["details"],
        r#"{"to":"bob@example.com"}"#
    );
    assert_eq!(listing["truncated"], false);

    let table = stdout_of(&cli(
        seeded.server.addr,
        &["tasks", "list", "--state", "input_required"],
    ));
    assert!(table.contains("send_email"), "{table}");
    assert!(table.contains(&seeded.parked_task), "{table}");
}

#[tokio::test]
async fn tasks_approve_makes_the_task_pending_with_the_decision_recorded() {
    let seeded = seeded_server().await;
    let output = cli(
        seeded.server.addr,
        &[
            "tasks",
            "approve",
            &seeded.parked_task,
            "--by",
            "alice",
            "--comment",
            "looks fine",
        ],
    );
    let printed = stdout_of(&output);
    assert!(printed.contains("approved by alice"), "{printed}");

    let task = task_client(seeded.server.addr)
        .await
        .get(GetRequest {
            task_id: seeded.parked_task.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(task.state, TaskState::Pending as i32);
    let approval = task.approval.unwrap();
    assert!(approval.decided && approval.approved, "{approval:?}");
    assert_eq!(approval.decided_by, "alice");
    assert_eq!(approval.comment, "looks fine");
}

#[tokio::test]
async fn runs_show_lists_every_saved_step_unverified_until_verify_finds_them_valid() {
    let seeded = seeded_server().await;
    let table = stdout_of(&cli(seeded.server.addr, &["runs", "show", SAVED_RUN]));
    let rows: Vec<&str> = table.lines().skip(1).take(3).collect();
    assert_eq!(rows.len(), 3, "{table}");
    for (row, step) in rows.iter().zip(1..=3) {
        assert!(row.starts_with(&step.to_string()), "{table}");
        assert!(row.ends_with(" unverified"), "{table}");
    }
    let verified = stdout_of(&cli(
        seeded.server.addr,
        &["runs", "show", SAVED_RUN, "--verify"],
    ));
    let rows: Vec<&str> = verified.lines().skip(2).collect();
    assert_eq!(rows.len(), 3, "{verified}");
    for (row, step) in rows.iter().zip(1..=3) {
        assert!(row.starts_with(&step.to_string()), "{verified}");
        assert!(row.ends_with(" valid"), "{verified}");
    }

    let verified: Value = serde_json::from_str(&stdout_of(&cli(
        seeded.server.addr,
        &["runs", "show", SAVED_RUN, "--verify", "--json"],
    )))
    .unwrap();
    let steps: Vec<i64> = verified["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|verdict| verdict["valid"] == true)
        .map(|verdict| verdict["step"].as_i64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2, 3], "{verified}");
}

#[tokio::test]
async fn runs_resume_reports_the_recovered_step_and_the_new_epoch() {
    let seeded = seeded_server().await;
    let resumed: Value = serde_json::from_str(&stdout_of(&cli(
        seeded.server.addr,
        &["runs", "resume", SAVED_RUN, "--json"],
    )))
    .unwrap();
    assert_eq!(resumed["recovered_from_step"], 3, "{resumed}");
    assert_eq!(resumed["restarted_from_scratch"], false);
    assert_eq!(resumed["epoch"], 1);
}

#[tokio::test]
async fn runs_list_and_head_show_where_runs_stand_without_fencing() {
    let seeded = seeded_server().await;
    let listing: Value = serde_json::from_str(&stdout_of(&cli(
        seeded.server.addr,
        &["runs", "list", "--prefix", "run-with", "--json"],
    )))
    .unwrap();
    let runs = listing.as_array().unwrap();
    assert_eq!(runs.len(), 1, "{listing}");
    assert_eq!(runs[0]["run_id"], SAVED_RUN);
    assert_eq!(runs[0]["latest_step"], 3);
    let table = stdout_of(&cli(seeded.server.addr, &["runs", "list"]));
    assert!(table.starts_with("RUN"), "{table}");
    assert!(table.contains(SAVED_RUN), "{table}");
    let head: Value = serde_json::from_str(&stdout_of(&cli(
        seeded.server.addr,
        &["runs", "head", SAVED_RUN, "--json"],
    )))
    .unwrap();
    assert_eq!(
        (
            &head["checkpoint_count"],
            &head["latest_valid_step"],
            &head["epoch"]
        ),
        (&Value::from(3), &Value::from(3), &Value::from(0)),
        "{head}"
    );
    let missing = cli(seeded.server.addr, &["runs", "head", "no-such-run"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("NOT_FOUND"));
}

#[tokio::test]
async fn tasks_show_of_a_bad_id_exits_non_zero_with_the_grpc_code() {
    let seeded = seeded_server().await;
    for id in ["not-a-task-id", "0190a5b2-0000-7000-8000-000000000000"] {
        let output = cli(seeded.server.addr, &["tasks", "show", id]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{id}: {stderr}");
        assert!(
            stderr.contains("INVALID_ARGUMENT") || stderr.contains("NOT_FOUND"),
            "{id}: {stderr}"
        );
    }
}

#[tokio::test]
async fn the_tenant_flag_scopes_what_the_cli_sees() {
    let seeded = seeded_server().await;
    let listing: Value = serde_json::from_str(&stdout_of(&cli(
        seeded.server.addr,
        &["tasks", "list", "--tenant", "someone-else", "--json"],
    )))
    .unwrap();
    assert_eq!(listing["tasks"].as_array().unwrap().len(), 0, "{listing}");
    let everything: Value = serde_json::from_str(&stdout_of(&cli(
        seeded.server.addr,
        &["tasks", "list", "--json"],
    )))
    .unwrap();
    assert_eq!(
        everything["tasks"].as_array().unwrap().len(),
        2,
        "{everything}"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_named_in_the_error() {
    // A port that was free a moment ago: nothing listens there now.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let output = cli(addr, &["tasks", "list"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot connect to checkpointd at http://{addr}")),
        "{stderr}"
    );
}

/// A history longer than one answer page: the CLI follows the continuation, so `runs show
/// --payload` and `runs resume` see every message (an older client would get ANSWER_TOO_LARGE).
#[tokio::test]
async fn the_cli_shows_a_paged_history_whole() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("x.db").display());
    let server = ServerProcess::start(
        &url,
        &[
            "--max-answer-message-bytes",
            "100",
            "--max-unpaged-answer-bytes",
            "100",
        ],
    );
    let mut client = support::connect(server.addr).await;
    client
        .save(checkpointd::proto::SaveRequest {
            messages: (0..12)
                .map(|i| checkpointd::proto::Message {
                    role: "user".into(),
                    content: format!("message number {i:02} of twelve").into_bytes(),
                })
                .collect(),
            ..requests::save("long-run", 1, b"{}")
        })
        .await
        .unwrap();
    let shown: Value = serde_json::from_str(&stdout_of(&cli(
        server.addr,
        &[
            "runs",
            "show",
            "long-run",
            "--step",
            "1",
            "--payload",
            "--json",
        ],
    )))
    .unwrap();
    let messages = shown["messages"].as_array().expect("messages").clone();
    assert_eq!(messages.len(), 12, "{shown}");
    let resumed: Value = serde_json::from_str(&stdout_of(&cli(
        server.addr,
        &["runs", "resume", "long-run", "--json"],
    )))
    .unwrap();
    assert_eq!(resumed["recovered_from_step"], 1, "{resumed}");
}
