//! Telemetry from real processes: traces and metrics exported over OTLP to an in-test collector,
//! the trace joined across the runner and the server, export that never holds up a Save, and
//! the Prometheus scrape on the admin port.

use std::collections::HashMap;
use std::time::Duration;

use checkpointd::proto::EnqueueRequest;
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd_testkit::{OtlpReceiver, ReceivedSpan};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{ServerProcess, WorkerProcess, channel, requests};

/// Short export intervals so the test sees data in well under a second.
const FAST_EXPORT: [(&str, &str); 2] = [
    ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
];
const SPAN_KIND_SERVER: i32 = 2;
const SPAN_KIND_CLIENT: i32 = 3;

fn sqlite_url(dir: &tempfile::TempDir) -> String {
    format!("sqlite://{}", dir.path().join("checkpointd.db").display())
}

fn exporting_server(dir: &tempfile::TempDir, receiver: &OtlpReceiver) -> ServerProcess {
    let endpoint = receiver.endpoint();
    ServerProcess::start_with_env(
        &sqlite_url(dir),
        &["--otlp-endpoint", &endpoint, "--instance-id", "server-1"],
        &FAST_EXPORT,
    )
}

fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
        .and_then(|value| value.parse().ok())
}

fn named<'a>(spans: &'a [ReceivedSpan], name: &str, instance: &str) -> Vec<&'a ReceivedSpan> {
    spans
        .iter()
        .filter(|span| span.name == name && span.instance_id == instance)
        .collect()
}

#[tokio::test]
async fn each_runner_save_is_one_span_with_the_server_span_as_its_child_and_metrics_arrive() {
    let receiver = OtlpReceiver::start()
        .await
        .expect("start the otlp receiver");
    let dir = tempfile::tempdir().unwrap();
    let server = exporting_server(&dir, &receiver);
    TaskServiceClient::new(channel(server.addr).await)
        .enqueue(EnqueueRequest {
            run_id: "traced".into(),
            input: b"{\"steps\":6}".to_vec(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap();
    let endpoint = receiver.endpoint();
    let mut worker = WorkerProcess::start_with_env(
        server.addr,
        &[
            "--exit-after",
            "1",
            "--strategy",
            "every_step",
            "--otlp-endpoint",
            &endpoint,
            "--instance-id",
            "worker-1",
        ],
        &FAST_EXPORT,
    );
    let worker = tokio::task::spawn_blocking(move || {
        assert!(worker.wait().success(), "worker failed");
        worker
    })
    .await
    .unwrap();
    let summary = worker
        .lines()
        .into_iter()
        .find(|line| line.starts_with("summary"))
        .expect("the worker prints a summary");
    let saves = field(&summary, "saves").expect("saves in the summary") as usize;
    assert!(saves >= 6, "{summary}");

    // The worker flushed on exit; the server exports on its own schedule.
    let complete = receiver
        .wait_for(Duration::from_secs(20), |r| {
            let spans = r.spans();
            named(&spans, "checkpoint.save", "server-1").len() >= saves
                && named(&spans, "store.save", "server-1").len() >= saves
        })
        .await;
    assert!(complete, "server spans did not arrive");
    let spans = receiver.spans();
    let runner_saves = named(&spans, "checkpoint.save", "worker-1");
    assert_eq!(runner_saves.len(), saves, "one runner span per checkpoint");
    let by_id: HashMap<&[u8], &ReceivedSpan> = spans
        .iter()
        .map(|span| (span.span_id.as_slice(), span))
        .collect();
    let mut steps = Vec::new();
    for runner in &runner_saves {
        assert_eq!(runner.kind, SPAN_KIND_CLIENT);
        assert!(
            runner.duration() > Duration::ZERO,
            "a save span has a latency"
        );
        let step = by_id
            .get(runner.parent_span_id.as_slice())
            .expect("the save belongs to its step's span");
        assert_eq!(step.name, "agent.step");
        assert_eq!(
            step.attributes["checkpoint.step"],
            runner.attributes["checkpoint.step"]
        );
        steps.push(runner.attributes["checkpoint.step"].clone());
        let served: Vec<_> = named(&spans, "checkpoint.save", "server-1")
            .into_iter()
            .filter(|span| span.parent_span_id == runner.span_id)
            .collect();
        assert_eq!(
            served.len(),
            1,
            "the server span is the runner span's child"
        );
        let served = served[0];
        assert_eq!(served.trace_id, runner.trace_id);
        assert_eq!(served.kind, SPAN_KIND_SERVER);
        assert_eq!(
            served.attributes["checkpoint.step"],
            runner.attributes["checkpoint.step"]
        );
        let stored = named(&spans, "store.save", "server-1")
            .into_iter()
            .find(|span| span.parent_span_id == served.span_id)
            .expect("the store span sits under the server span");
        assert_eq!(stored.attributes["db.system"], "sqlite");
        assert!(by_id.contains_key(stored.parent_span_id.as_slice()));
    }
    steps.sort();
    steps.dedup();
    assert_eq!(steps.len(), saves, "one span per step");

    let server_metrics = [
        "checkpointd.rpc.duration",
        "checkpointd.store.duration",
        "checkpointd.saves",
        "checkpointd.save.size",
        "checkpointd.recoveries",
        "checkpointd.checkpoints.corrupt_skipped",
        "checkpointd.cache.lookups",
        "checkpointd.cache.bypasses",
        "checkpointd.queue.depth",
    ];
    let worker_metrics = [
        "checkpointd.runner.save.duration",
        "checkpointd.runner.tool_calls",
    ];
    let arrived = receiver
        .wait_for(Duration::from_secs(20), |r| {
            let metrics = r.metrics();
            let sent_by = |name: &str, instance: &str| {
                metrics
                    .get(name)
                    .is_some_and(|from| from.contains(instance))
            };
            server_metrics.iter().all(|name| sent_by(name, "server-1"))
                && worker_metrics.iter().all(|name| sent_by(name, "worker-1"))
        })
        .await;
    let mut names: Vec<_> = receiver.metrics().into_iter().collect();
    names.sort();
    assert!(arrived, "missing metrics; received {names:?}");
}

#[tokio::test]
async fn saves_keep_succeeding_after_the_collector_goes_away() {
    let receiver = OtlpReceiver::start()
        .await
        .expect("start the otlp receiver");
    let dir = tempfile::tempdir().unwrap();
    let server = exporting_server(&dir, &receiver);
    let mut client = CheckpointServiceClient::new(channel(server.addr).await);
    let mut step = 0;
    let mut save = async |client: &mut CheckpointServiceClient<_>| {
        step += 1;
        let request = requests::save("collector-gone", step, format!("state {step}").as_bytes());
        let answered = tokio::time::timeout(Duration::from_secs(10), client.save(request)).await;
        let outcome = answered.unwrap_or_else(|_| panic!("save {step} never answered"));
        outcome.unwrap_or_else(|status| panic!("save {step} failed: {status}"));
    };
    for _ in 0..20 {
        save(&mut client).await;
    }
    let exported = receiver
        .wait_for(Duration::from_secs(20), |r| !r.spans().is_empty())
        .await;
    assert!(exported, "export was on before the collector went away");

    receiver.stop().await;
    for _ in 0..300 {
        save(&mut client).await;
    }
    let latest = client
        .load_latest(checkpointd::proto::LoadLatestRequest {
            run_id: "collector-gone".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(latest.checkpoint.unwrap().step, 320);
}

/// A plain HTTP/1.1 GET; returns the status code and the body.
pub(crate) async fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// Checks the Prometheus text format line by line; returns each family's declared type.
fn parse_prometheus(text: &str) -> HashMap<String, String> {
    let mut types = HashMap::new();
    for line in text.lines().filter(|line| !line.is_empty()) {
        if let Some(comment) = line.strip_prefix("# ") {
            let mut parts = comment.split_whitespace();
            match parts.next() {
                Some("TYPE") => {
                    let name = parts.next().expect("TYPE names a family");
                    let kind = parts.next().expect("TYPE gives a type");
                    types.insert(name.to_owned(), kind.to_owned());
                }
                Some("HELP") => {}
                other => panic!("unexpected comment {other:?} in {line:?}"),
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("a sample is `series value`");
        value
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("sample value in {line:?}"));
        let name = series.split('{').next().unwrap();
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "metric name in {line:?}"
        );
        if let Some(labels) = series.strip_prefix(name) {
            assert!(
                labels.is_empty() || (labels.starts_with('{') && labels.ends_with('}')),
                "labels in {line:?}"
            );
        }
    }
    types
}

#[tokio::test]
async fn metrics_scrape_as_prometheus_text_with_latency_histograms_and_healthz_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&sqlite_url(&dir), &[]);
    let mut client = CheckpointServiceClient::new(channel(server.addr).await);
    for step in 1..=3 {
        client
            .save(requests::save("scraped", step, b"state"))
            .await
            .unwrap();
    }
    // Step 3 rots on disk: LoadLatest skips it, and a Resume recovers from step 2.
    let db = dir.path().join("checkpointd.db");
    tokio::task::spawn_blocking(move || {
        let conn = rusqlite::Connection::open(db).unwrap();
        let changed = conn
            .execute(
                "UPDATE checkpoints SET state = X'00' || substr(state, 2) \
                 WHERE run_id = 'scraped' AND step = 3",
                [],
            )
            .unwrap();
        assert_eq!(changed, 1);
    })
    .await
    .unwrap();
    let restored = client
        .load_latest(checkpointd::proto::LoadLatestRequest {
            run_id: "scraped".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(restored.skipped_steps, vec![3]);
    client
        .resume(checkpointd::proto::ResumeRequest {
            run_id: "scraped".into(),
            ..Default::default()
        })
        .await
        .unwrap();

    let (status, body) = http_get(server.admin_addr, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    let types = parse_prometheus(&body);
    for histogram in [
        "checkpointd_rpc_duration_seconds",
        "checkpointd_store_duration_seconds",
    ] {
        assert_eq!(
            types.get(histogram).map(String::as_str),
            Some("histogram"),
            "{body}"
        );
        for suffix in ["_bucket", "_sum", "_count"] {
            assert!(
                body.lines()
                    .any(|line| line.starts_with(&format!("{histogram}{suffix}"))),
                "{histogram}{suffix} missing:\n{body}"
            );
        }
    }
    let sample = |name: &str, label: &str| -> f64 {
        let line = body
            .lines()
            .find(|line| line.starts_with(name) && line.contains(label))
            .unwrap_or_else(|| panic!("no {name} with {label}:\n{body}"));
        line.rsplit_once(' ').unwrap().1.parse().unwrap()
    };
    assert_eq!(
        sample("checkpointd_saves_total{", "db_system=\"sqlite\""),
        3.0
    );
    assert_eq!(
        sample("checkpointd_checkpoints_corrupt_skipped_total", ""),
        1.0
    );
    assert_eq!(
        sample(
            "checkpointd_recoveries_total{",
            "resumed_from=\"checkpoint\""
        ),
        1.0
    );
    assert!(body.contains("checkpointd_queue_depth{"), "{body}");

    let (status, body) = http_get(server.admin_addr, "/healthz").await;
    assert_eq!((status, body.trim()), (200, "ok"));
}

#[tokio::test]
async fn the_demo_prints_per_save_latency_quantiles_and_bytes() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .arg("demo")
        .env("RUST_LOG", "warn")
        .output()
        .await
        .expect("run checkpointd demo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let latency = stdout
        .lines()
        .find(|line| line.starts_with("per-save latency"))
        .unwrap_or_else(|| panic!("no latency summary:\n{stdout}"));
    for quantile in ["p50 ", "p95 ", "p99 "] {
        assert!(latency.contains(quantile), "{latency}");
    }
    let bytes = stdout
        .lines()
        .find(|line| line.starts_with("bytes per save"))
        .unwrap_or_else(|| panic!("no bytes summary:\n{stdout}"));
    let mean: u64 = bytes.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(mean > 0, "{bytes}");
}
