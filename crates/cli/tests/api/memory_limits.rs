//! The worst requests the limits admit keep a real `checkpointd serve` process under the Helm
//! chart's memory limit, its memory goes back after the burst, and each cap answers with the
//! code the README documents.

use std::time::{Duration, Instant};

use checkpointd::config::{RequestLimits, ServerSettings};
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{Message, SaveRequest};
use tonic::Code;
use tonic::codegen::Bytes;
use tonic::codegen::http;
use tonic::transport::Channel;

use crate::support::{ServerProcess, connect, wait_until};

const MIB: u64 = 1 << 20;
/// Concurrent worst-case Saves per burst: three times what the default budget admits at once,
/// spread over several connections.
const CONNECTIONS: usize = 4;
const SAVES_PER_CONNECTION: usize = 3;
/// Bursts of the refused (retryable) Saves sent again before the test gives up.
const RETRY_ROUNDS: usize = 3;
/// How far above its idle size the server may stay once the burst is over (measured: 2 MiB).
const RETAINED_BOUND: u64 = 32 * MIB;

/// A field of `/proc/PID/status` (`VmRSS`, `VmHWM`), in bytes.
pub(crate) fn proc_status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    let kib: u64 = line
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("a number of kB");
    kib * 1024
}

/// The server container's memory limit in the chart's default values, in bytes.
pub(crate) fn chart_memory_limit() -> u64 {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../helm/checkpointd/values.yaml"
    );
    let values = std::fs::read_to_string(path).expect("read the chart's values.yaml");
    let raw = yaml_scalar(&values, &["server", "resources", "limits", "memory"])
        .expect("server.resources.limits.memory in values.yaml");
    let (number, unit) = raw.split_at(raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len()));
    let number: u64 = number.parse().expect("a memory quantity");
    number
        * match unit {
            "Gi" => 1 << 30,
            "Mi" => MIB,
            "Ki" => 1 << 10,
            "" => 1,
            other => panic!("unexpected memory unit {other:?} in values.yaml"),
        }
}

/// The scalar at `path` in block-style YAML (enough for values.yaml: nested maps, comments).
fn yaml_scalar(text: &str, path: &[&str]) -> Option<String> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let content = line.split(" #").next().unwrap_or("").trim_end();
        let trimmed = content.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('-') {
            continue;
        }
        let indent = content.len() - trimmed.len();
        let Some((key, value)) = trimmed.split_once(':') else {
            continue;
        };
        while stack.last().is_some_and(|(depth, _)| *depth >= indent) {
            stack.pop();
        }
        stack.push((indent, key.trim().to_owned()));
        let at_path =
            stack.len() == path.len() && stack.iter().zip(path).all(|((_, key), want)| key == want);
        if at_path {
            return Some(value.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// The three worst Saves the default limits admit, each just under the size limit: the most
/// messages, the most metadata entries, the largest state.
fn worst_saves(run: &str, max_bytes: usize, limits: RequestLimits) -> Vec<SaveRequest> {
    let room = max_bytes - 64 * 1024;
    let messages = limits.max_messages_per_save;
    let entries = limits.max_metadata_entries;
    let base = |kind: &str| SaveRequest {
        run_id: format!("{run}-{kind}"),
        step: 1,
        content_type: "application/octet-stream".into(),
        ..SaveRequest::default()
    };
    vec![
        SaveRequest {
            messages: (0..messages)
                .map(|i| Message {
                    role: "user".into(),
                    content: vec![b'a' + (i % 26) as u8; room / messages - 8],
                })
                .collect(),
            ..base("messages")
        },
        SaveRequest {
            metadata: (0..entries)
                .map(|i| (format!("key-{i}"), "v".repeat(room / entries - 16)))
                .collect(),
            ..base("metadata")
        },
        SaveRequest {
            state: vec![7; room],
            ..base("state")
        },
    ]
}

async fn save(client: &mut CheckpointServiceClient<Channel>, request: SaveRequest) -> Code {
    match client.save(request).await {
        Ok(_) => Code::Ok,
        Err(status) => status.code(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_worst_requests_the_limits_admit_stay_under_the_charts_memory_limit() {
    let started = Instant::now();
    let chart_limit = chart_memory_limit();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("memory.db").display());
    let server = ServerProcess::start(&url, &[]);
    let pid = server.pid();
    let max_bytes = ServerSettings::default().max_request_bytes;
    let limits = RequestLimits::default();
    let mut clients = Vec::new();
    for _ in 0..CONNECTIONS {
        clients.push(connect(server.addr).await);
    }
    // Warm up: the first calls allocate the runtime's and SQLite's long-lived buffers.
    let mut warm = clients[0].clone();
    assert_eq!(
        save(&mut warm, worst_saves("warm", 1 << 20, limits).remove(2)).await,
        Code::Ok
    );
    let idle = proc_status(pid, "VmRSS");

    // Every kind of worst Save at once on every connection, three times what the budget
    // admits together. A Save that found the budget full for its whole wait is refused as an
    // overload (UNAVAILABLE, retryable): on a slow machine (a debug build on shared cores,
    // beside the rest of the suite) most of a burst may be. Those are sent again, all at once,
    // as a client retries them, until a budget's worth has been admitted; the peak below is the
    // high-water mark over every round.
    let mut pending: Vec<(usize, usize)> = (0..CONNECTIONS)
        .flat_map(|connection| (0..SAVES_PER_CONNECTION).map(move |index| (connection, index)))
        .collect();
    let mut codes = Vec::new();
    let mut saved = 0;
    for round in 0..RETRY_ROUNDS {
        let mut calls = tokio::task::JoinSet::new();
        for &(connection, index) in &pending {
            let run = format!("burst-{round}-{connection}-{index}");
            let request = worst_saves(&run, max_bytes, limits).remove(index % 3);
            let mut client = clients[connection].clone();
            calls.spawn(async move { ((connection, index), save(&mut client, request).await) });
        }
        let answers = calls.join_all().await;
        assert!(
            answers
                .iter()
                .all(|(_, code)| matches!(code, Code::Ok | Code::Unavailable)),
            "{answers:?}"
        );
        saved += answers.iter().filter(|(_, code)| *code == Code::Ok).count();
        codes.extend(answers.iter().map(|(_, code)| *code));
        pending = answers
            .into_iter()
            .filter(|(_, code)| *code == Code::Unavailable)
            .map(|(call, _)| call)
            .collect();
        if saved >= RequestLimits::DEFAULT_LARGEST_REQUESTS_IN_FLIGHT || pending.is_empty() {
            break;
        }
    }
    // At least a budget's worth of worst Saves were admitted, so the peak is theirs.
    assert!(
        saved >= RequestLimits::DEFAULT_LARGEST_REQUESTS_IN_FLIGHT,
        "{codes:?}"
    );
    let peak = proc_status(pid, "VmHWM");
    assert!(
        peak < chart_limit,
        "peak RSS {} MiB is not under the chart's limit of {} MiB",
        peak / MIB,
        chart_limit / MIB
    );
    // Freed memory goes back to the OS: the allocator returns it soon after the burst.
    wait_until("the server's memory is back near its idle size", || async {
        proc_status(pid, "VmRSS") <= idle + RETAINED_BOUND
    })
    .await;
    let after = proc_status(pid, "VmRSS");
    eprintln!(
        "memory: idle {} MiB, peak {} MiB, after the burst {} MiB (chart limit {} MiB); {codes:?}",
        idle / MIB,
        peak / MIB,
        after / MIB,
        chart_limit / MIB
    );

    // One over each cap gets RESOURCE_EXHAUSTED, and nothing is stored.
    let mut client = clients[0].clone();
    let mut too_many_messages = worst_saves("over", 1 << 20, limits).remove(0);
    too_many_messages.messages.push(Message::default());
    let mut too_much_metadata = worst_saves("over", 1 << 20, limits).remove(1);
    too_much_metadata
        .metadata
        .insert("one-more".into(), String::new());
    let too_large = SaveRequest {
        state: vec![0; max_bytes + 1],
        ..worst_saves("over", 1 << 20, limits).remove(2)
    };
    for (what, request, needle) in [
        ("messages", too_many_messages, "--max-messages-per-save"),
        ("metadata", too_much_metadata, "--max-metadata-entries"),
        ("size", too_large, "--max-request-bytes"),
    ] {
        let run_id = request.run_id.clone();
        let status = client.save(request).await.expect_err(what);
        assert_eq!(status.code(), Code::ResourceExhausted, "{what}: {status:?}");
        assert!(status.message().contains(needle), "{what}: {status:?}");
        // The request's other fields, where it has any, keep their defaults.
        #[allow(clippy::needless_update)]
        let load = checkpointd::proto::LoadLatestRequest {
            run_id,
            ..Default::default()
        };
        let missing = client.load_latest(load).await.expect_err(what);
        assert_eq!(missing.code(), Code::NotFound, "{what}: {missing:?}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

/// A raw HTTP/2 client: it can send a gRPC prefix and then nothing, which tonic's client never
/// does.
pub(crate) async fn raw_connection(addr: std::net::SocketAddr) -> h2::client::SendRequest<Bytes> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (send, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    send.ready().await.unwrap()
}

/// Opens a Save whose prefix declares `length` bytes and sends only the prefix.
async fn declare_save(
    send: &mut h2::client::SendRequest<Bytes>,
    length: u32,
) -> (h2::client::ResponseFuture, h2::SendStream<Bytes>) {
    let request = http::Request::post("/checkpoint.v1.CheckpointService/Save")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut body) = send.send_request(request, false).unwrap();
    let mut prefix = vec![0];
    prefix.extend_from_slice(&length.to_be_bytes());
    body.send_data(Bytes::from(prefix), false).unwrap();
    (response, body)
}

/// The `grpc-status` of a trailers-only answer.
fn grpc_status(response: &http::Response<h2::RecvStream>) -> Option<i32> {
    response
        .headers()
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_budgeted_by_their_declared_size_before_they_are_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("budget.db").display());
    let budget = 4 * MIB;
    let server = ServerProcess::start(
        &url,
        &[
            "--max-request-bytes",
            &budget.to_string(),
            "--max-inflight-request-bytes",
            &budget.to_string(),
        ],
    );
    let mut raw = raw_connection(server.addr).await;

    // A prefix over the size limit is refused from its five bytes: nothing is reserved for it.
    let (response, _body) = declare_save(&mut raw, u32::MAX).await;
    let response = response.await.unwrap();
    assert_eq!(grpc_status(&response), Some(Code::ResourceExhausted as i32));

    // A request that declares the whole budget and then stalls holds it: others wait, then
    // get UNAVAILABLE, a code clients retry.
    let (stalled, stalled_body) = declare_save(&mut raw, budget as u32).await;
    let mut client = connect(server.addr).await;
    let small = SaveRequest {
        run_id: "small".into(),
        step: 1,
        state: b"{}".to_vec(),
        ..SaveRequest::default()
    };
    wait_until("the stalled request holds the whole budget", || async {
        budget_used(server.admin_addr).await == budget
    })
    .await;
    let waited = Instant::now();
    // From another tenant on another connection, so neither of those shares is what it
    // finds full.
    let status = client
        .save(crate::support::for_tenant("other", small.clone()))
        .await
        .expect_err("over budget");
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(
        status.message().contains("--max-inflight-request-bytes"),
        "{status:?}"
    );
    assert!(
        waited.elapsed() >= Duration::from_secs(4),
        "{:?}",
        waited.elapsed()
    );

    // Once the stalled request is gone, its share of the budget is free again.
    drop((stalled, stalled_body, raw));
    wait_until("the budget is free again", || async {
        budget_used(server.admin_addr).await == 0
    })
    .await;
    client.save(small).await.expect("room in the budget again");
}

/// The `checkpointd_request_budget_used_bytes` gauge on the admin port's `/metrics`.
pub(crate) async fn budget_used(admin: std::net::SocketAddr) -> u64 {
    let (status, body) = crate::telemetry::http_get(admin, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    let line = body
        .lines()
        .find(|line| line.starts_with("checkpointd_request_budget_used_bytes"))
        .unwrap_or_else(|| panic!("no request budget gauge in:\n{body}"));
    line.rsplit_once(' ').unwrap().1.parse().unwrap()
}

/// Figures for BENCHMARKS.md, not a check: the two attacks against a server whose caps
/// and budget are lifted out of the way, then against the defaults. Run with
/// `cargo test -p checkpointd-cli --test api memory_figures -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "prints figures; takes a minute"]
async fn memory_figures() {
    // Eight bytes a message on the wire: two million fill 16 MB, one million 8 MB.
    let tiny = crate::decoded_memory::tiny_messages;
    let lifted: &[&str] = &[
        "--max-messages-per-save",
        "4000000000",
        "--max-metadata-entries",
        "4000000000",
        "--max-inflight-request-bytes",
        "100000000000",
        "--memory-limit-bytes",
        "0",
    ];
    for (label, args) in [("caps lifted", lifted), ("defaults", &[][..])] {
        for (attack, requests) in [
            (
                "one Save of 2,000,000 one-byte messages",
                vec![tiny("tiny", 2_000_000)],
            ),
            (
                "four concurrent Saves of 1,000,000 one-byte messages (8 MB each)",
                (0..4)
                    .map(|i| tiny(&format!("tiny-{i}"), 1_000_000))
                    .collect(),
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("figures.db").display());
            let server = ServerProcess::start(&url, args);
            let pid = server.pid();
            let idle = proc_status(pid, "VmRSS");
            let mut calls = tokio::task::JoinSet::new();
            for request in requests {
                let mut client = connect(server.addr).await;
                calls.spawn(async move { save(&mut client, request).await });
            }
            let codes = calls.join_all().await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            eprintln!(
                "{label}: {attack}: {codes:?}; idle {} MiB, peak {} MiB, 2 s later {} MiB",
                idle / MIB,
                proc_status(pid, "VmHWM") / MIB,
                proc_status(pid, "VmRSS") / MIB
            );
        }
    }
}
