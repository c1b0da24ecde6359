//! The request budget counts what a request costs decoded, so a real `checkpointd serve`
//! process stays under its memory limit whatever the caps: many small Saves of empty messages
//! at the defaults, four Saves of a million messages at raised caps, and caps that could never
//! fit the limit refused at startup, naming them.

use std::time::{Duration, Instant};

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{Message, SaveRequest};
use tonic::Code;
use tonic::transport::Channel;

use crate::memory_limits::{chart_memory_limit, proc_status};
use crate::support::{ServerProcess, connect, serve_command, wait_until};

const MIB: u64 = 1 << 20;
/// How far above its idle size the server may stay once a burst is over.
const RETAINED_BOUND: u64 = 48 * MIB;

/// A Save of `count` one-byte messages: eight bytes each on the wire, hundreds decoded.
pub(crate) fn tiny_messages(run: &str, count: usize) -> SaveRequest {
    SaveRequest {
        run_id: run.into(),
        step: 1,
        messages: vec![
            Message {
                role: "u".into(),
                content: b"x".to_vec(),
            };
            count
        ],
        ..SaveRequest::default()
    }
}

async fn save(client: &mut CheckpointServiceClient<Channel>, request: SaveRequest) -> Code {
    match client.save(request).await {
        Ok(_) => Code::Ok,
        Err(status) => status.code(),
    }
}

/// Sends every request at once, spread over `clients`, and again those refused as an overload
/// (UNAVAILABLE, which clients retry), until all are saved; panics on any other answer.
async fn save_all_retrying(
    clients: &[CheckpointServiceClient<Channel>],
    requests: Vec<SaveRequest>,
    deadline: Duration,
) -> usize {
    let started = Instant::now();
    let mut pending = requests;
    let mut refusals = 0;
    while !pending.is_empty() {
        assert!(
            started.elapsed() < deadline,
            "{} Saves still refused after {deadline:?}",
            pending.len()
        );
        let mut calls = tokio::task::JoinSet::new();
        for (index, request) in pending.into_iter().enumerate() {
            let mut client = clients[index % clients.len()].clone();
            calls.spawn(async move { (save(&mut client, request.clone()).await, request) });
        }
        pending = Vec::new();
        for (code, request) in calls.join_all().await {
            match code {
                Code::Ok => {}
                Code::Unavailable => {
                    refusals += 1;
                    pending.push(request);
                }
                other => panic!("Save of {} answered {other:?}", request.run_id),
            }
        }
    }
    refusals
}

/// Asserts the server's peak RSS stayed under `limit` and waits for its memory to come back
/// near `idle`, printing the figures.
async fn peak_under_limit_and_memory_back(
    burst: &str,
    pid: u32,
    idle: u64,
    limit: u64,
    refusals: usize,
) {
    let peak = proc_status(pid, "VmHWM");
    eprintln!(
        "{burst}: idle {} MiB, peak {} MiB, {refusals} refusals retried (limit {} MiB)",
        idle / MIB,
        peak / MIB,
        limit / MIB
    );
    assert!(
        peak < limit,
        "{burst}: peak RSS {} MiB is not under {} MiB",
        peak / MIB,
        limit / MIB
    );
    wait_until("the server's memory is back near its idle size", || async {
        proc_status(pid, "VmRSS") <= idle + RETAINED_BOUND
    })
    .await;
}

/// Starts a server on a fresh SQLite file, connects `connections` clients and warms it up.
async fn started(
    args: &[&str],
    connections: usize,
) -> (
    ServerProcess,
    Vec<CheckpointServiceClient<Channel>>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("decoded.db").display());
    let server = ServerProcess::start(&url, args);
    let mut clients = Vec::new();
    for _ in 0..connections {
        clients.push(connect(server.addr).await);
    }
    let mut warm = clients[0].clone();
    assert_eq!(save(&mut warm, tiny_messages("warm", 1000)).await, Code::Ok);
    (server, clients, dir)
}

/// At the default caps, 200 Saves of 10,000 empty messages fit the wire budget thirty times
/// over (20 KB each) but decode to about 4 MB each: the budget admits only what fits decoded.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_small_saves_of_empty_messages_stay_under_the_charts_memory_limit() {
    let limit = chart_memory_limit();
    let limit_arg = limit.to_string();
    let (server, clients, _dir) = started(&["--memory-limit-bytes", &limit_arg], 8).await;
    let pid = server.pid();
    let idle = proc_status(pid, "VmRSS");
    let requests = (0..200)
        .map(|i| tiny_messages(&format!("small-{i}"), 10_000))
        .collect();
    let refusals = save_all_retrying(&clients, requests, Duration::from_secs(240)).await;
    peak_under_limit_and_memory_back(
        "200 Saves of 10,000 one-byte messages",
        pid,
        idle,
        limit,
        refusals,
    )
    .await;
}

/// With the message cap raised to a million, a memory limit of 1 GiB sizes the default budget
/// down: four concurrent Saves of a million messages (8 MB on the wire, about 400 MB decoded)
/// are admitted one or two at a time, every one is saved, and the peak stays under the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_saves_of_a_million_messages_at_raised_caps_stay_under_the_memory_limit() {
    let limit = 1 << 30;
    let limit_arg = limit.to_string();
    let args = [
        "--max-messages-per-save",
        "1000000",
        "--memory-limit-bytes",
        &limit_arg,
    ];
    let (server, clients, _dir) = started(&args, 4).await;
    let pid = server.pid();
    let idle = proc_status(pid, "VmRSS");
    let requests = (0..4)
        .map(|i| tiny_messages(&format!("million-{i}"), 1_000_000))
        .collect();
    let refusals = save_all_retrying(&clients, requests, Duration::from_secs(300)).await;
    peak_under_limit_and_memory_back(
        "four Saves of 1,000,000 one-byte messages",
        pid,
        idle,
        limit,
        refusals,
    )
    .await;
}

/// Caps that let one Save decode to more than the memory limit leaves for requests, and a
/// configured budget too large for it, stop `serve` before it listens, naming the settings.
#[test]
fn settings_that_cannot_fit_the_memory_limit_refuse_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("refused.db").display());
    let chart = chart_memory_limit().to_string();
    for (args, needle) in [
        (
            vec!["--max-messages-per-save", "2000000"],
            "--max-messages-per-save 2000000",
        ),
        (
            vec!["--max-inflight-request-bytes", "1073741824"],
            "--max-inflight-request-bytes 1073741824",
        ),
    ] {
        let output = serve_command(&url)
            .args(["--memory-limit-bytes", &chart])
            .args(&args)
            .output()
            .expect("run checkpointd serve");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} started: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(
            stderr.contains("--memory-limit-bytes"),
            "{args:?}: {stderr}"
        );
    }
}
