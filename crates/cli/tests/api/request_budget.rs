//! The request budget is fair, not a lock: one tenant holding never-finished large requests
//! delays only itself, health checks never wait behind the budget, and a stalled body is cut
//! off after `--request-body-timeout` and its bytes given back. A real `checkpointd serve` with
//! API keys for two tenants, on SQLite and Postgres.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use tonic::Code;
use tonic::codegen::Bytes;
use tonic::codegen::http;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::auth::bearer;
use crate::memory_limits::budget_used;
use crate::support::{PgSchema, ServerProcess, channel, stdout_of, wait_until};

const MIB: u64 = 1 << 20;
/// The default largest request, which the attacker declares on each stream.
const LARGEST: u64 = 16 * MIB;
/// What a Save declaring [`LARGEST`] bytes holds until its body has been scanned: the most it
/// can cost decoded, with as many messages and metadata entries as the default caps allow
/// (10,000 and 1,000) at 128 budget bytes each.
const LARGEST_HELD: u64 = LARGEST + 11_000 * 128;
/// Short enough for a test, longer than the victim's saves take.
const BODY_TIMEOUT_SECS: u64 = 10;

/// An agent key of `tenant`, made with the real `checkpointd keys` on the server's database.
fn agent_key(url: &str, tenant: &str) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args(["keys", "create", "--tenant", tenant, "--role", "agent"])
        .args(["--database", url])
        .env_remove("CHECKPOINTD_DATABASE")
        .output()
        .expect("run checkpointd keys");
    stdout_of(&output).trim().to_owned()
}

/// A Save on its own raw HTTP/2 connection whose prefix declares `length` bytes, followed by
/// a little of the body and then silence, which tonic's client never does.
async fn stalled_save(addr: SocketAddr, token: &str, length: u32) -> h2::client::ResponseFuture {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (send, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut send = send.ready().await.unwrap();
    let request = http::Request::post("/checkpoint.v1.CheckpointService/Save")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap();
    let (response, mut body) = send.send_request(request, false).unwrap();
    let mut start = vec![0];
    start.extend_from_slice(&length.to_be_bytes());
    start.extend_from_slice(&[0x0a, 0x03, b'r', b'u', b'n']);
    body.send_data(Bytes::from(start), false).unwrap();
    // The stream stays open as long as its sending half lives: keep it with the connection.
    tokio::spawn(async move {
        let _keep_open = body;
        std::future::pending::<()>().await;
    });
    response
}

/// The `grpc-status` and `grpc-message` of a trailers-only answer.
fn grpc_status(response: &http::Response<h2::RecvStream>) -> (i32, String) {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    (
        header("grpc-status").parse().unwrap_or(-1),
        header("grpc-message"),
    )
}

/// Probes the gRPC health check and the admin port's `/healthz` every 100 ms with a 1 s
/// timeout until `stop`; returns how many probes were made and which failed.
async fn probe_health(
    addr: SocketAddr,
    admin: SocketAddr,
    stop: tokio::sync::watch::Receiver<bool>,
) -> (usize, Vec<String>) {
    let mut health = HealthClient::new(channel(addr).await);
    let (mut probes, mut failures) = (0, Vec::new());
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while !*stop.borrow() {
        tick.tick().await;
        probes += 1;
        let check = health.check(HealthCheckRequest {
            service: "checkpoint.v1.CheckpointService".into(),
        });
        match tokio::time::timeout(Duration::from_secs(1), check).await {
            Ok(Ok(_)) => {}
            Ok(Err(status)) => failures.push(format!("grpc health: {status:?}")),
            Err(_) => failures.push(format!("grpc health timed out (probe {probes})")),
        }
        let healthz = crate::telemetry::http_get(admin, "/healthz");
        match tokio::time::timeout(Duration::from_secs(1), healthz).await {
            Ok((200, _)) => {}
            Ok((code, body)) => failures.push(format!("/healthz: {code} {body}")),
            Err(_) => failures.push(format!("/healthz timed out (probe {probes})")),
        }
    }
    (probes, failures)
}

async fn one_tenant_holding_large_stalled_requests_delays_only_itself(url: &str) {
    let attacker = agent_key(url, "attacker");
    let victim = agent_key(url, "victim");
    let server = ServerProcess::start(
        url,
        &[
            "--auth",
            "api-key",
            "--request-body-timeout",
            &format!("{BODY_TIMEOUT_SECS}s"),
        ],
    );

    // Five streams, each on its own connection so the connection's share is not what stops
    // them: the tenant's share (half the budget of four largest requests) admits two; three wait on it.
    let stalled_at = Instant::now();
    let mut stalled = Vec::new();
    for _ in 0..5 {
        stalled.push(tokio::spawn(
            stalled_save(server.addr, &attacker, LARGEST as u32).await,
        ));
    }
    wait_until("the attacker holds its whole share", || async {
        budget_used(server.admin_addr).await == 2 * LARGEST_HELD
    })
    .await;

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let probes = tokio::spawn(probe_health(server.addr, server.admin_addr, stopped));
    let mut client = CheckpointServiceClient::new(channel(server.addr).await);
    for step in 1..=30 {
        let save = crate::support::requests::save("victim-run", step, b"{\"ok\":true}");
        let saved = tokio::time::timeout(
            Duration::from_secs(2),
            client.save(bearer(Some(&victim), None, save)),
        )
        .await;
        match saved {
            Ok(Ok(_)) => {}
            Ok(Err(status)) => panic!("the victim's save {step} was refused: {status:?}"),
            Err(_) => panic!("the victim's save {step} did not answer within 2 s"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.send(true).unwrap();
    let (count, failures) = probes.await.unwrap();
    assert!(count >= 20, "only {count} probes");
    assert!(failures.is_empty(), "health probes failed: {failures:?}");
    assert!(
        stalled_at.elapsed() < Duration::from_secs(BODY_TIMEOUT_SECS),
        "the victim's saves ran past the body timeout, so they did not overlap the attack: {:?}",
        stalled_at.elapsed()
    );

    // The attacker's own calls: those over its share wait and are refused as an overload it
    // may retry; those holding bytes are cut off when their bodies do not arrive in time.
    let mut answers = Vec::new();
    for response in stalled {
        let response = response.await.unwrap().unwrap();
        answers.push(grpc_status(&response));
    }
    let count_of = |code: Code| {
        answers
            .iter()
            .filter(|(got, _)| *got == code as i32)
            .count()
    };
    assert_eq!(count_of(Code::Unavailable), 3, "{answers:?}");
    assert_eq!(count_of(Code::DeadlineExceeded), 2, "{answers:?}");
    for (code, message) in &answers {
        let flag = if *code == Code::Unavailable as i32 {
            "--max-tenant-request-bytes"
        } else {
            "--request-body-timeout"
        };
        assert!(message.contains(flag), "{code} {message}");
    }
    assert!(
        stalled_at.elapsed() >= Duration::from_secs(BODY_TIMEOUT_SECS),
        "{:?}",
        stalled_at.elapsed()
    );
    wait_until("the stalled requests gave their bytes back", || async {
        budget_used(server.admin_addr).await == 0
    })
    .await;
    eprintln!(
        "request budget attack: peak {} MiB; every victim Save and health probe answered",
        crate::memory_limits::proc_status(server.pid(), "VmHWM") >> 20
    );

    // And the attacker may save again once its requests are gone.
    let save = crate::support::requests::save("attacker-run", 1, b"{}");
    client
        .save(bearer(Some(&attacker), None, save))
        .await
        .expect("the attacker's share is free again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tenant_holding_large_stalled_requests_delays_only_itself_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("budget.db").display());
    one_tenant_holding_large_stalled_requests_delays_only_itself(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tenant_holding_large_stalled_requests_delays_only_itself_on_postgres() {
    let schema = PgSchema::create().await;
    one_tenant_holding_large_stalled_requests_delays_only_itself(&schema.url()).await;
}

/// One connection holds at most one largest request, whatever it sends: a second large
/// request on it waits on the connection's share and is refused, while the same tenant on
/// another connection is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_holds_at_most_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("connection.db").display());
    let server = ServerProcess::start(&url, &["--request-body-timeout", "30s"]);
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (send, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut bodies = Vec::new();
    let mut responses = Vec::new();
    for _ in 0..2 {
        let mut send = send.clone().ready().await.unwrap();
        let request = http::Request::post("/checkpoint.v1.CheckpointService/Save")
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
        let (response, mut body) = send.send_request(request, false).unwrap();
        let mut prefix = vec![0];
        prefix.extend_from_slice(&(LARGEST as u32).to_be_bytes());
        body.send_data(Bytes::from(prefix), false).unwrap();
        bodies.push(body);
        responses.push(response);
        if responses.len() == 1 {
            wait_until("the first request holds the connection's share", || async {
                budget_used(server.admin_addr).await == LARGEST_HELD
            })
            .await;
        }
    }
    let mut client = CheckpointServiceClient::new(channel(server.addr).await);
    client
        .save(crate::support::requests::save("other-connection", 1, b"{}"))
        .await
        .expect("another connection of the same tenant is served");
    let second = responses.pop().unwrap().await.unwrap();
    let (code, message) = grpc_status(&second);
    assert_eq!(code, Code::Unavailable as i32, "{message}");
    assert!(
        message.contains("--max-connection-request-bytes"),
        "{message}"
    );
    assert_eq!(budget_used(server.admin_addr).await, LARGEST_HELD);
    drop(bodies);
}
