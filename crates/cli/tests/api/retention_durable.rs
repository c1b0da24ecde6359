//! Retention on the durable stores: ages, corruption, approval pins, the background pruner and
//! the `checkpointd prune` and `checkpointd runs pin` commands as real processes.

use std::process::Command;
use std::time::{Duration, Instant};

use checkpointd::config::RetentionSettings;
use checkpointd::config::ServerSettings;
use checkpointd::proto::{
    ApproveRequest, ClaimRequest, EnqueueRequest, RequestApprovalRequest, ResumeRequest,
    UnpinCheckpointRequest,
};
use checkpointd_core::retention::RetentionPolicy;
use serde_json::Value;

use crate::retention::{prune, seed, steps};
use crate::support::{
    Backend, PgSchema, ServerProcess, TestApp, connect, spawn_app, spawn_app_with,
};

async fn max_age_prunes_only_checkpoints_older_than_the_age(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 4).await;
    let two_hours_ago = match backend {
        Backend::Sqlite => "created_at - 7200000000",
        _ => "created_at - interval '2 hours'",
    };
    // Steps 1, 2 and 4 are old; 4 is the latest, which no age prunes.
    app.raw_sql(&format!(
        "UPDATE checkpoints SET created_at = {two_hours_ago} WHERE step IN (1, 2, 4)"
    ))
    .await;
    let client_policy = checkpointd::proto::SetRetentionRequest {
        run_id: "run-1".into(),
        policy: "max_age:1h".into(),
    };
    client.set_retention(client_policy).await.unwrap();
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![3, 4]);
}

async fn a_corrupt_latest_checkpoint_keeps_its_predecessor(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 4).await;
    app.corrupt_state("run-1", 4).await;
    prune(&app, RetentionPolicy::LatestOnly).await;
    // 4 is quarantined by the pruner's verification and kept for inspection; 3 is what
    // Resume restores, so it stays.
    assert_eq!(steps(&mut client, "run-1").await, vec![3, 4]);
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 3);
    assert_eq!(resumed.skipped_steps, vec![4]);
}

async fn a_task_awaiting_approval_pins_its_latest_checkpoint_until_decided(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let mut tasks = app.tasks().await;
    let task = tasks
        .enqueue(EnqueueRequest {
            run_id: "run-1".into(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    let claimed = tasks
        .claim(ClaimRequest {
            worker_id: "worker-1".into(),
            batch_size: 1,
            ..ClaimRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0);
    seed(&mut client, "run-1", 1, 2).await;
    tasks
        .request_approval(RequestApprovalRequest {
            task_id: task.task_id.clone(),
            attempt: claimed.attempt,
            action: "send_email".into(),
            details: Vec::new(),
        })
        .await
        .unwrap();
    seed(&mut client, "run-1", 3, 4).await;
    prune(&app, RetentionPolicy::LatestOnly).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![2, 4]);
    // An operator's plain unpin does not release the approval's pin.
    let unpin = UnpinCheckpointRequest {
        run_id: "run-1".into(),
        step: 2,
        all_sources: false,
    };
    assert!(
        !client
            .unpin_checkpoint(unpin)
            .await
            .unwrap()
            .into_inner()
            .unpinned
    );

    tasks
        .approve(ApproveRequest {
            task_id: task.task_id,
            decided_by: "alice".into(),
            comment: String::new(),
        })
        .await
        .unwrap();
    prune(&app, RetentionPolicy::LatestOnly).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![4]);
}

async fn the_background_pruner_applies_the_default_policy(backend: Backend) {
    let settings = ServerSettings {
        retention: RetentionSettings {
            default_policy: RetentionPolicy::LatestOnly,
            prune_interval: Duration::from_millis(20),
            batch_size: 500,
        },
        ..ServerSettings::default()
    };
    let app = spawn_app_with(backend, settings).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 3).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = steps(&mut client, "run-1").await;
        if left == vec![3] {
            break;
        }
        assert!(Instant::now() < deadline, "still holds {left:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs the binary off the runtime's thread, which must stay free to serve its requests.
pub async fn checkpointd(args: &[&str]) -> Vec<Value> {
    let owned: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_checkpointd"))
            .args(&owned)
            .output()
            .expect("run checkpointd")
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "checkpointd {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // One JSON document per answer, on one line or pretty-printed over several.
    serde_json::Deserializer::from_slice(&output.stdout)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect()
}

async fn prune_command(app: &TestApp, dry_run: bool) -> Vec<Value> {
    let mut args = vec![
        "prune",
        "--database",
        &app.url,
        "--retention",
        "latest_only",
        "--json",
    ];
    if dry_run {
        args.push("--dry-run");
    }
    checkpointd(&args).await
}

async fn a_dry_run_reports_and_deletes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 4).await;
    seed(&mut client, "run-2", 1, 1).await;

    let lines = prune_command(&app, true).await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["run_id"], "run-1");
    assert_eq!(lines[0]["steps"], serde_json::json!([1, 2, 3]));
    assert_eq!(lines[0]["latest_valid"], 4);
    assert_eq!(lines[1]["checkpoints"], 3);
    assert_eq!(lines[1]["dry_run"], true);
    assert_eq!(steps(&mut client, "run-1").await, vec![1, 2, 3, 4]);

    let lines = prune_command(&app, false).await;
    assert_eq!(lines.last().unwrap()["checkpoints"], 3);
    assert_eq!(steps(&mut client, "run-1").await, vec![4]);
    assert_eq!(steps(&mut client, "run-2").await, vec![1]);
}

async fn an_operator_pins_and_unpins_with_the_cli(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 3).await;
    let server = format!("http://{}", app.addr);
    let runs = |args: &[&str]| {
        let mut all = vec!["runs", "--server", server.as_str(), "--json"];
        all.extend_from_slice(args);
        all.into_iter().map(str::to_owned).collect::<Vec<String>>()
    };
    let run = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        checkpointd(&args).await
    };
    assert_eq!(run(runs(&["pin", "run-1", "1"])).await[0]["pinned"], true);
    assert_eq!(
        run(runs(&["retention", "run-1", "latest_only"])).await[0]["policy"],
        "latest_only"
    );
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![1, 3]);
    assert_eq!(
        run(runs(&["unpin", "run-1", "1"])).await[0]["unpinned"],
        true
    );
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![3]);
}

#[tokio::test]
async fn a_server_process_prunes_in_the_background_and_stops_on_sigterm() {
    let schema = PgSchema::create().await;
    let mut server = ServerProcess::start(
        &schema.url(),
        &["--retention", "keep_last:2", "--prune-interval", "20ms"],
    );
    let mut client = connect(server.addr).await;
    seed(&mut client, "run-1", 1, 4).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = steps(&mut client, "run-1").await;
        if left == vec![3, 4] {
            break;
        }
        assert!(Instant::now() < deadline, "still holds {left:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The pruner is one of the things shutdown waits for; the process still exits cleanly.
    let status = tokio::task::spawn_blocking(move || server.terminate())
        .await
        .unwrap();
    assert!(status.success(), "{status:?}");
}

crate::for_each_durable_backend!(
    max_age_prunes_only_checkpoints_older_than_the_age,
    a_corrupt_latest_checkpoint_keeps_its_predecessor,
    a_task_awaiting_approval_pins_its_latest_checkpoint_until_decided,
    the_background_pruner_applies_the_default_policy,
    a_dry_run_reports_and_deletes_nothing,
    an_operator_pins_and_unpins_with_the_cli,
);
