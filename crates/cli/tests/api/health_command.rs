//! `checkpointd health` as a real process: exit 0 only for SERVING, one line of output always.

use std::net::SocketAddr;
use std::process::Output;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_stream::StreamExt;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::health::serve_through_proxy;
use crate::support::{Backend, spawn_app};

const CHECKPOINT_SERVICE: &str = "checkpoint.v1.CheckpointService";

/// Runs `checkpointd health --addr ADDR` plus `extra`. Async, so the in-process server on this
/// test's runtime keeps answering while the child waits for it.
async fn health_command(addr: SocketAddr, extra: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args(["health", "--addr", &addr.to_string()])
        .args(extra)
        .output()
        .await
        .expect("run checkpointd health")
}

/// Everything the command printed, on either stream, as lines.
fn printed_lines(output: &Output) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    stdout
        .lines()
        .chain(stderr.lines())
        .map(str::to_owned)
        .collect()
}

/// Asserts a failed check: non-zero exit and a single line that names the reason.
fn assert_fails_with_one_line(output: &Output, reason: &str) {
    assert!(!output.status.success(), "{output:?}");
    let lines = printed_lines(output);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains(reason), "{lines:?}");
}

#[tokio::test]
async fn a_serving_server_exits_zero_and_prints_serving() {
    let app = spawn_app(Backend::Memory).await;
    for extra in [&[][..], &["--service", CHECKPOINT_SERVICE][..]] {
        let output = health_command(app.addr, extra).await;
        assert!(output.status.success(), "{extra:?}: {output:?}");
        assert_eq!(printed_lines(&output), ["SERVING"], "{extra:?}");
    }
}

#[tokio::test]
async fn a_closed_port_exits_non_zero_with_one_line() {
    // Bind and drop: the port was free a moment ago and nothing listens on it now.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let output = health_command(addr, &["--timeout", "5s"]).await;
    assert_fails_with_one_line(&output, "cannot connect");
}

#[tokio::test]
async fn an_unknown_service_exits_non_zero() {
    let app = spawn_app(Backend::Memory).await;
    let output = health_command(app.addr, &["--service", "no.such.Service"]).await;
    assert_fails_with_one_line(&output, "NOT_FOUND");
}

#[tokio::test]
async fn a_server_whose_store_is_down_exits_non_zero() {
    let (app, mut proxy, schema) = serve_through_proxy().await;
    let output = health_command(app.addr, &[]).await;
    assert!(output.status.success(), "before the cut: {output:?}");

    // Wait on the health stream itself for the flip, rather than polling the command.
    let mut statuses = HealthClient::new(app.channel().await)
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    proxy.cut().await;
    loop {
        let response = tokio::time::timeout(Duration::from_secs(20), statuses.next())
            .await
            .expect("no health change within 20 s")
            .expect("health stream ended")
            .unwrap();
        if ServingStatus::try_from(response.status) == Ok(ServingStatus::NotServing) {
            break;
        }
    }

    for extra in [&[][..], &["--service", CHECKPOINT_SERVICE][..]] {
        let output = health_command(app.addr, extra).await;
        assert_fails_with_one_line(&output, "NOT_SERVING");
    }
    drop(schema);
}
