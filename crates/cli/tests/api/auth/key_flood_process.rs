//! The real `checkpointd serve` binary on Postgres under 10,000 forged API keys, with the reads
//! of the `api_keys` table counted by Postgres itself (`pg_stat_user_tables`), not by us.

use std::time::Instant;

use checkpointd::grpc::auth::key_gate::{MISSES_PER_WINDOW, WINDOW};
use checkpointd::proto::LoadLatestRequest;
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use tonic::Code;

use super::{assert_unauthenticated, bearer};
use crate::support::{PgSchema, ServerProcess, channel, stdout_of, wait_until};

const FORGED: usize = 10_000;
const SENDERS: usize = 16;

/// Scans of the schema's `api_keys` table that Postgres has recorded so far.
async fn key_table_scans(schema: &PgSchema) -> i64 {
    let (client, connection) =
        tokio_postgres::connect(&checkpointd_testkit::database_url(), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    let name = schema.url();
    // Unquoted in CREATE SCHEMA, so Postgres keeps it in lower case.
    let name = name.rsplit("search_path%3D").next().unwrap().to_lowercase();
    client
        .query_one(
            "SELECT COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) FROM pg_stat_user_tables \
             WHERE schemaname = $1 AND relname = 'api_keys'",
            &[&name],
        )
        .await
        .unwrap()
        .get(0)
}

/// Whether a connection named `application` is still open.
async fn connected(application: &str) -> bool {
    let (client, connection) =
        tokio_postgres::connect(&checkpointd_testkit::database_url(), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    let count: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            &[&application],
        )
        .await
        .unwrap()
        .get(0);
    count > 0
}

#[tokio::test]
async fn ten_thousand_forged_key_ids_cost_a_handful_of_key_table_scans_on_postgres() {
    let schema = PgSchema::create().await;
    // Named, so the test can tell when the server's connections are gone: a backend flushes
    // its table statistics when it exits, before it leaves pg_stat_activity.
    let application = format!("keyflood{}", std::process::id());
    let url = format!("{}&application_name={application}", schema.url());
    let mut server = ServerProcess::start(&url, &["--auth", "api-key"]);

    // A key made by the CLI in another process while the server runs works on its first call.
    let created = std::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args(["keys", "create", "--tenant", "acme", "--role", "agent"])
        .args(["--database", &schema.url()])
        .env_remove("CHECKPOINTD_DATABASE")
        .output()
        .expect("run checkpointd keys");
    let token = stdout_of(&created).trim().to_owned();
    let client = CheckpointServiceClient::new(channel(server.addr).await);
    let load = move |token: String| {
        let mut client = client.clone();
        async move {
            let request = LoadLatestRequest {
                run_id: "run-1".into(),
                ..Default::default()
            };
            client
                .load_latest(bearer(Some(&token), None, request))
                .await
        }
    };
    let admitted = load(token.clone()).await.unwrap_err();
    assert_eq!(admitted.code(), Code::NotFound, "{admitted:?}");

    let started = Instant::now();
    let senders: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let load = load.clone();
            tokio::spawn(async move {
                for i in (sender..FORGED).step_by(SENDERS) {
                    let forged = format!("ckpt_f0{:014x}_{}", i, "ab".repeat(32));
                    assert_unauthenticated(&load(forged).await.unwrap_err());
                }
            })
        })
        .collect();
    for sender in senders {
        sender.await.unwrap();
    }
    let elapsed = started.elapsed();
    let peak = crate::memory_limits::proc_status(server.pid(), "VmHWM") >> 20;
    server.terminate();
    wait_until("the server's connections are closed", || async {
        !connected(&application).await
    })
    .await;
    let scans = key_table_scans(&schema).await;
    // Setup read the table a few times too (the CLI's insert, the first call of the key).
    let windows = (elapsed.as_secs_f64() / WINDOW.as_secs_f64()).floor() as i64 + 2;
    let allowed = i64::from(MISSES_PER_WINDOW) * windows + 4;
    eprintln!("{FORGED} forged key ids in {elapsed:?}: {scans} scans of api_keys, peak {peak} MiB");
    assert!(
        scans <= allowed,
        "{scans} scans of api_keys (allowed {allowed})"
    );
}
