//! Every repeated and map field of every request is capped before it is decoded: one over a
//! cap gets `RESOURCE_EXHAUSTED` / `TOO_LARGE` naming the field, the cap and its flag, alike
//! on every backend; and a ListCheckpoints whose filter holds 1.3 million entries is refused at
//! a small peak by a real `checkpointd serve` process.

use std::collections::HashMap;

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    DeleteCheckpointsRequest, ListCheckpointsRequest, Message, RecordToolResultsRequest,
    ResumeRequest, SaveRequest, ToolResultInput,
};
use checkpointd_protocol::{MAX_CLIENT_CAPABILITIES, MAX_DELETE_STEPS, MAX_TOOL_RESULTS_PER_BATCH};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt as _;

use crate::memory_limits::proc_status;
use crate::support::{Backend, PgSchema, ServerProcess, connect, spawn_app};

const MIB: u64 = 1 << 20;
/// The default `--max-messages-per-save` and `--max-metadata-entries`.
const MAX_MESSAGES: usize = 10_000;
const MAX_METADATA: usize = 1_000;

/// The refusal's code, reason and message.
fn refusal(result: Result<impl Sized, Status>) -> (Code, String, String) {
    let status = result.err().expect("a refusal");
    let reason = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"))
        .reason;
    (status.code(), reason, status.message().to_owned())
}

/// Asserts the TOO_LARGE answer naming `field` and `source` (a flag, or "a protocol limit").
fn assert_too_large(answer: (Code, String, String), field: &str, source: &str) {
    let (code, reason, message) = answer;
    assert_eq!(
        (code, reason.as_str()),
        (Code::ResourceExhausted, "TOO_LARGE"),
        "{field}: {message}"
    );
    assert!(
        message.contains(field) && message.contains(source),
        "{field}, {source}: {message}"
    );
}

fn filter(entries: usize) -> HashMap<String, String> {
    (0..entries)
        .map(|i| (format!("k{i}"), String::new()))
        .collect()
}

async fn list(
    client: &mut CheckpointServiceClient<Channel>,
    entries: usize,
) -> (Code, String, String) {
    let request = ListCheckpointsRequest {
        run_id: "run".into(),
        metadata_filter: filter(entries),
        ..Default::default()
    };
    refusal(client.list_checkpoints(request).await)
}

async fn every_counted_field_answers_too_large(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;

    let save = SaveRequest {
        run_id: "run".into(),
        step: 1,
        state: b"{}".to_vec(),
        ..Default::default()
    };
    let messages = SaveRequest {
        messages: vec![Message::default(); MAX_MESSAGES + 1],
        ..save.clone()
    };
    assert_too_large(
        refusal(client.save(messages).await),
        "SaveRequest.messages",
        "--max-messages-per-save",
    );
    let metadata = SaveRequest {
        metadata: filter(MAX_METADATA + 1),
        ..save.clone()
    };
    assert_too_large(
        refusal(client.save(metadata).await),
        "SaveRequest.metadata",
        "--max-metadata-entries",
    );

    // The filter: over the cap refused before decoding; at the cap judged as ever (the run is
    // unknown, or not: either way not TOO_LARGE).
    assert_too_large(
        list(&mut client, MAX_METADATA + 1).await,
        "ListCheckpointsRequest.metadata_filter",
        "--max-metadata-entries",
    );
    client.save(save).await.expect("a plain save");
    let at_cap = ListCheckpointsRequest {
        run_id: "run".into(),
        metadata_filter: filter(MAX_METADATA),
        ..Default::default()
    };
    let listed = client.list_checkpoints(at_cap).await.unwrap().into_inner();
    assert!(listed.checkpoints.is_empty());

    let resume = ResumeRequest {
        run_id: "run".into(),
        capabilities: vec![1; MAX_CLIENT_CAPABILITIES + 1],
        ..Default::default()
    };
    assert_too_large(
        refusal(client.resume(resume).await),
        "ResumeRequest.capabilities",
        "a protocol limit",
    );

    let results = RecordToolResultsRequest {
        run_id: "run".into(),
        epoch: None,
        results: vec![ToolResultInput::default(); MAX_TOOL_RESULTS_PER_BATCH + 1],
    };
    assert_too_large(
        refusal(client.record_tool_results(results).await),
        "RecordToolResultsRequest.results",
        "a protocol limit",
    );

    let delete = DeleteCheckpointsRequest {
        run_id: "run".into(),
        steps: (1..=MAX_DELETE_STEPS as i64 + 1).collect(),
        epoch: None,
    };
    assert_too_large(
        refusal(client.delete_checkpoints(delete).await),
        "DeleteCheckpointsRequest.steps",
        "a protocol limit",
    );
    // Nothing was deleted or resumed: the run still has its one checkpoint at epoch 0.
    let head = client
        .get_run(checkpointd::proto::GetRunRequest {
            run_id: "run".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .run
        .unwrap();
    assert_eq!((head.checkpoint_count, head.epoch), (1, 0));
}

#[tokio::test]
async fn every_counted_field_answers_too_large_in_memory() {
    every_counted_field_answers_too_large(Backend::Memory).await;
}

#[tokio::test]
async fn every_counted_field_answers_too_large_on_sqlite() {
    every_counted_field_answers_too_large(Backend::Sqlite).await;
}

#[tokio::test]
async fn every_counted_field_answers_too_large_on_postgres() {
    every_counted_field_answers_too_large(Backend::Postgres).await;
}

/// Entries in the attack's filter: 1.3 million distinct keys of 8 bytes and empty values, 12
/// bytes each on the wire, about 15 MiB, under `--max-request-bytes`.
const ATTACK_ENTRIES: usize = 1_300_000;
/// Filters sent at once, on their own connections, as in the measured attack (737 MiB).
const ATTACKERS: usize = 4;
/// How far above its idle size the server's peak may go. Decoded, each filter took ~180 MiB.
const PEAK_BOUND: u64 = 64 * MIB;

async fn an_oversized_filter_is_refused_at_a_small_peak(database_url: &str) {
    let server = ServerProcess::start(database_url, &[]);
    let pid = server.pid();
    let mut warm = connect(server.addr).await;
    // Warm up: the first calls allocate the runtime's and the store's long-lived buffers.
    let answer = list(&mut warm, MAX_METADATA + 1).await;
    assert_eq!(answer.0, Code::ResourceExhausted, "{answer:?}");
    let idle = proc_status(pid, "VmRSS");

    let filter = filter(ATTACK_ENTRIES);
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..ATTACKERS {
        let mut client = connect(server.addr).await;
        let request = ListCheckpointsRequest {
            run_id: "run".into(),
            metadata_filter: filter.clone(),
            ..Default::default()
        };
        calls.spawn(async move { refusal(client.list_checkpoints(request).await) });
    }
    for answer in calls.join_all().await {
        assert_too_large(
            answer,
            "ListCheckpointsRequest.metadata_filter",
            "--max-metadata-entries",
        );
    }
    let peak = proc_status(pid, "VmHWM");
    eprintln!(
        "oversized filters: idle {} MiB, peak {} MiB",
        idle / MIB,
        peak / MIB
    );
    assert!(
        peak < idle + PEAK_BOUND,
        "peak {} MiB is not within {} MiB of idle ({} MiB)",
        peak / MIB,
        PEAK_BOUND / MIB,
        idle / MIB
    );
    // The server still serves.
    let listed = warm
        .list_checkpoints(ListCheckpointsRequest {
            run_id: "run".into(),
            ..Default::default()
        })
        .await;
    assert_ne!(listed.map_err(|s| s.code()).err(), Some(Code::Unavailable));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_metadata_filter_is_refused_at_a_small_peak_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("caps.db").display());
    an_oversized_filter_is_refused_at_a_small_peak(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_metadata_filter_is_refused_at_a_small_peak_on_postgres() {
    let schema = PgSchema::create().await;
    an_oversized_filter_is_refused_at_a_small_peak(&schema.url()).await;
}
