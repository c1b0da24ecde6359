//! Durability: every acknowledged Save survives a SIGKILL of the real server process.

use checkpointd::proto::{LoadLatestRequest, SaveRequest};

use crate::support::requests::{message, save, tool};
use crate::support::validate_run;
use crate::support::{Backend, PgSchema, ServerProcess, connect};

const STEPS: i64 = 25;

async fn acknowledged_checkpoints_survive_sigkill(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (url, _schema) = match backend {
        Backend::Sqlite => (
            format!("sqlite://{}", dir.path().join("crash.db").display()),
            None,
        ),
        Backend::Postgres => {
            let schema = PgSchema::create().await;
            (schema.url(), Some(schema))
        }
        Backend::Memory => unreachable!("memory keeps nothing across processes"),
    };

    let mut server = ServerProcess::start(&url, &[]);
    let mut client = connect(server.addr).await;
    for step in 1..=STEPS {
        client
            .record_tool_result(tool(
                "crash-run",
                &format!("step-{step}/send_email/0"),
                step,
                "ok",
            ))
            .await
            .unwrap();
        client
            .save(SaveRequest {
                messages: vec![message("assistant", &format!("step {step}"))],
                message_offset: (step - 1) as u64,
                ..save("crash-run", step, format!("{{\"step\":{step}}}").as_bytes())
            })
            .await
            .unwrap();
    }
    // No graceful shutdown: the process dies the instant the last Save is acknowledged.
    server.kill9();
    drop(client);

    let restarted = ServerProcess::start(&url, &[]);
    let mut client = connect(restarted.addr).await;
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "crash-run".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let checkpoint = latest.checkpoint.unwrap();
    assert_eq!(checkpoint.step, STEPS);
    assert_eq!(checkpoint.messages.len(), STEPS as usize);
    assert_eq!(latest.tool_results.len(), STEPS as usize);
    let verdicts = validate_run(&mut client, "crash-run").await;
    assert_eq!(verdicts.len(), STEPS as usize);
    assert!(verdicts.iter().all(|v| v.valid), "{verdicts:?}");
}

async fn sigterm_stops_the_server_cleanly(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (url, _schema) = match backend {
        Backend::Sqlite => (
            format!("sqlite://{}", dir.path().join("term.db").display()),
            None,
        ),
        Backend::Postgres => {
            let schema = PgSchema::create().await;
            (schema.url(), Some(schema))
        }
        Backend::Memory => unreachable!(),
    };
    let mut server = ServerProcess::start(&url, &["--drain-timeout", "5s"]);
    let mut client = connect(server.addr).await;
    client.save(save("run-1", 1, b"{}")).await.unwrap();
    let status = server.terminate();
    assert!(status.success(), "checkpointd exited with {status}");
}

crate::for_each_durable_backend!(
    acknowledged_checkpoints_survive_sigkill,
    sigterm_stops_the_server_cleanly,
);
