//! A real `checkpointd serve` behind PgBouncer (started by `.ci/pgbouncer.sh`): in transaction
//! mode with `--postgres-statements unnamed`, 8 clients × 40 Saves and LoadLatests at once all
//! succeed, the queue works and nothing is logged at warn or above (the depth gauge poller
//! included); in session mode the default `prepared` does the same; and `prepared` behind the
//! transaction-mode pooler refuses to start, naming the setting. These fail, never skip,
//! without `TEST_PGBOUNCER_TRANSACTION_URL` / `TEST_PGBOUNCER_SESSION_URL`.

use std::process::Command;
use std::time::Duration;

use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ClaimRequest, CompleteRequest, EnqueueRequest, GetRequest, LoadLatestRequest, TaskState,
};
use checkpointd_testkit::PooledDatabase;

use crate::support::requests::{message, save};
use crate::support::{ServerProcess, channel, connect, serve_command};

const CLIENTS: usize = 8;
const SAVES: i64 = 40;

/// The measured failure of issue 32: 8 concurrent clients, 40 Saves each, each Save followed
/// by a LoadLatest of its run; every call must succeed and read back what it wrote.
async fn saves_and_loads_all_succeed(server: &ServerProcess) {
    let mut clients = Vec::new();
    for client in 0..CLIENTS {
        let addr = server.addr;
        clients.push(tokio::spawn(async move {
            let mut grpc = connect(addr).await;
            let run_id = format!("pooled-{client}");
            for step in 1..=SAVES {
                let mut request = save(&run_id, step, format!("state {step}").as_bytes());
                request.message_offset = u64::try_from(step - 1).unwrap();
                request.messages = vec![message("user", &format!("turn {step}"))];
                grpc.save(request)
                    .await
                    .unwrap_or_else(|status| panic!("save {run_id} step {step}: {status:?}"));
                let loaded = grpc
                    .load_latest(LoadLatestRequest {
                        run_id: run_id.clone(),
                        ..Default::default()
                    })
                    .await
                    .unwrap_or_else(|status| panic!("load {run_id} at {step}: {status:?}"))
                    .into_inner()
                    .checkpoint
                    .expect("a checkpoint");
                assert_eq!(loaded.step, step);
                assert_eq!(loaded.messages.len(), usize::try_from(step).unwrap());
            }
        }));
    }
    for client in clients {
        client.await.expect("a client task panicked");
    }
}

/// Enqueue, claim and complete one task, then read it back completed.
async fn a_task_goes_through_the_queue(server: &ServerProcess) {
    let mut tasks = TaskServiceClient::new(channel(server.addr).await);
    let task = tasks
        .enqueue(EnqueueRequest {
            run_id: "pooled-task".into(),
            ..Default::default()
        })
        .await
        .expect("enqueue")
        .into_inner()
        .task
        .unwrap();
    let claimed = tasks
        .claim(ClaimRequest {
            worker_id: "pooled-worker".into(),
            lease_duration: Some(prost_types::Duration {
                seconds: 60,
                nanos: 0,
            }),
            batch_size: 1,
        })
        .await
        .expect("claim")
        .into_inner()
        .tasks;
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    assert_eq!(claimed[0].task_id, task.task_id);
    tasks
        .complete(CompleteRequest {
            task_id: task.task_id.clone(),
            attempt: claimed[0].attempt,
            result: b"done".to_vec(),
        })
        .await
        .expect("complete");
    let stored = tasks
        .get(GetRequest {
            task_id: task.task_id,
        })
        .await
        .expect("get")
        .into_inner()
        .task
        .unwrap();
    assert_eq!(stored.state, TaskState::Completed as i32);
}

/// Nothing at warn or above but the loopback development warning every auth-off server logs.
fn no_warnings(server: &ServerProcess) {
    let loud: Vec<String> = server
        .log_lines()
        .into_iter()
        .filter(|line| line.contains("WARN") || line.contains("ERROR"))
        .filter(|line| !line.contains("authentication is off"))
        .collect();
    assert!(loud.is_empty(), "the server logged: {loud:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_transaction_pooler_unnamed_statements_serve_8_clients_and_the_queue() {
    let database = PooledDatabase::create().await;
    let session = database.session_url();
    let server = ServerProcess::start_capturing_log(
        &database.transaction_url(),
        &[
            "--postgres-statements",
            "unnamed",
            "--postgres-listen-url",
            &session,
        ],
    );
    saves_and_loads_all_succeed(&server).await;
    a_task_goes_through_the_queue(&server).await;
    no_warnings(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_session_pooler_prepared_statements_serve_8_clients_and_the_queue() {
    let database = PooledDatabase::create().await;
    // A session-mode pooler gives each client connection a server connection for its life:
    // the server's pool must fit in PgBouncer's pool of 4 (docs/deploy.md has the arithmetic).
    let server = ServerProcess::start_capturing_log(&database.session_url(), &["--pool-size", "3"]);
    saves_and_loads_all_succeed(&server).await;
    a_task_goes_through_the_queue(&server).await;
    no_warnings(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_behind_a_transaction_pooler_refuse_to_start_naming_the_setting() {
    let database = PooledDatabase::create().await;
    let child = serve_command(&database.transaction_url())
        .env_remove("CHECKPOINTD_POSTGRES_STATEMENTS")
        .spawn()
        .expect("spawn checkpointd");
    // A server that started anyway would serve forever: bounded, then killed and failed.
    let pid = child.id();
    let exited = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || child.wait_with_output()),
    )
    .await;
    let Ok(exited) = exited else {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("checkpointd started behind a transaction-mode pooler with prepared statements");
    };
    let output = exited.expect("join").expect("checkpointd output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("transaction-mode pooler"), "{stderr}");
    assert!(stderr.contains("--postgres-statements unnamed"), "{stderr}");
}

/// `checkpointd keys list` straight on the database behind the transaction pooler: refused
/// naming the setting without it, served with the server's `CHECKPOINTD_POSTGRES_STATEMENTS`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_commands_take_the_statements_setting_from_the_environment() {
    let database = PooledDatabase::create().await;
    let keys_list = |statements: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_checkpointd"));
        command
            .args(["keys", "list", "--database", &database.transaction_url()])
            .env_remove("CHECKPOINTD_POSTGRES_STATEMENTS");
        if let Some(statements) = statements {
            command.env("CHECKPOINTD_POSTGRES_STATEMENTS", statements);
        }
        command.output().expect("run checkpointd keys list")
    };
    let refused = keys_list(None);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("--postgres-statements unnamed"), "{stderr}");
    let listed = keys_list(Some("unnamed"));
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
}
