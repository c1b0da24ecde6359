//! A property test over the request edge: random requests of every unary RPC, some of them
//! with their bytes mangled, go to three servers (memory, SQLite, Postgres). Every server
//! gives the same code to the same request, none answers `INTERNAL` or `UNKNOWN`, and all
//! stay up.
//!
//! The generator is a seeded xorshift, so a failure names the case that reproduces it.
//! `CHECKPOINTD_FUZZ_SECONDS` runs cases for that long instead of the fixed count (CI's
//! bounded fuzz step); `CHECKPOINTD_FUZZ_SEED` picks another sequence.

use std::time::{Duration, Instant};

use checkpointd::config::ServerSettings;
use checkpointd::proto::{
    ApproveRequest, CancelRequest, ClaimRequest, CompleteRequest, DeleteRunRequest, EnqueueRequest,
    EnqueueResponse, FailRequest, GetJournalRequest, GetRequest, GetRunRequest, HeartbeatRequest,
    ListCheckpointsRequest, ListRequest, ListRunsRequest, LoadAtStepRequest, LoadLatestRequest,
    Message, PinCheckpointRequest, RecordToolIntentRequest, RecordToolResultRequest,
    RecordToolResultsRequest, RejectRequest, ReleaseRequest, RepairJournalRequest,
    RequestApprovalRequest, RequeueRequest, ResumeRequest, ResumeTaskRequest, RetryPolicy,
    SaveRequest, SetRetentionRequest, ToolResultInput, UnpinCheckpointRequest, ValidateRequest,
    repair_journal_request,
};
use prost::Message as _;
use tonic::Code;
use tonic::transport::Channel;

use crate::bad_input_strings::raw_call;
use crate::support::{Backend, TestApp, spawn_app_with};

/// Cases of a plain `cargo test` run.
const DEFAULT_CASES: u64 = 300;

/// xorshift64*: small, seeded, and the same on every machine.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Clone>(&mut self, choices: &[T]) -> T {
        choices[self.below(choices.len() as u64) as usize].clone()
    }

    fn string(&mut self) -> String {
        match self.below(10) {
            0 => String::new(),
            1 => "a\0b".to_owned(),
            2 => "tab\there".to_owned(),
            3 => "x".repeat(257),
            4 => "ü-日本-🙂".to_owned(),
            5 => "y".repeat(70 * 1024),
            _ => self
                .pick(&["run-a", "run-b", "assistant", "deploy", "k", "all"])
                .to_owned(),
        }
    }

    fn bytes(&mut self) -> Vec<u8> {
        (0..self.below(40)).map(|_| self.next() as u8).collect()
    }

    fn int(&mut self) -> i64 {
        self.pick(&[-1, 0, 1, 2, 3, 7, i64::MAX, i64::MIN])
    }

    /// Client capabilities: none, paging, or more than the server knows.
    fn capabilities(&mut self) -> Vec<i32> {
        self.pick(&[vec![], vec![2], vec![1, 2, 99]])
    }

    fn unsigned(&mut self) -> u64 {
        self.pick(&[0, 1, 2, 3, u64::MAX])
    }

    /// Durations that are invalid or long enough that no lease or retry comes due during the
    /// test: a short one would make the answer depend on timing, not on the backend.
    fn duration(&mut self) -> Option<prost_types::Duration> {
        let seconds = self.pick(&[0, -5, 3600, 7200, 200_000, i64::MAX]);
        (self.below(4) != 0).then_some(prost_types::Duration { seconds, nanos: 0 })
    }
}

/// Settings under which nothing the fuzz does comes due while it runs, as [`Rng::duration`]
/// arranges for the durations a request names: the defaults that fill in the ones it leaves out
/// (a 1 s retry with random jitter, a 30 s lease) would make a later Claim take a task on one
/// backend and not yet on another, and the reaper and the pruner act on their own clocks.
fn settings_without_timers() -> ServerSettings {
    let hour = Duration::from_secs(3600);
    let mut settings = ServerSettings::default();
    settings.retry_defaults.initial_delay = hour;
    settings.retry_defaults.max_delay = settings.retry_defaults.max_delay.max(hour);
    settings.stale_threshold = hour;
    settings.reap_interval = Duration::ZERO;
    settings.retention.prune_interval = Duration::ZERO;
    settings
}

/// One generated call: its path and its encoded request.
type Call = (&'static str, Vec<u8>);

/// A random request of a random RPC; `task` is a task id this backend issued, if any. Also
/// whether the request may be mangled: not when it names the backend's own task, whose id
/// differs between backends, so the same flipped bit would make different requests.
fn generate(rng: &mut Rng, task: &str) -> (Call, bool) {
    let run_id = rng.string();
    let names_own_task = rng.below(3) != 0;
    let task_id = if names_own_task {
        task.to_owned()
    } else {
        rng.string()
    };
    let call = generate_call(rng, run_id, task_id);
    let names_own_task = names_own_task && TASK_CALLS.contains(&call.0);
    (call, !names_own_task)
}

/// The calls that may name the backend's own task.
const TASK_CALLS: [&str; 12] = [
    "/checkpoint.v1.TaskService/Heartbeat",
    "/checkpoint.v1.TaskService/Complete",
    "/checkpoint.v1.TaskService/Fail",
    "/checkpoint.v1.TaskService/Release",
    "/checkpoint.v1.TaskService/RequestApproval",
    "/checkpoint.v1.TaskService/Approve",
    "/checkpoint.v1.TaskService/Reject",
    "/checkpoint.v1.TaskService/Get",
    "/checkpoint.v1.TaskService/Cancel",
    "/checkpoint.v1.TaskService/Requeue",
    "/checkpoint.v1.TaskService/ResumeTask",
    // Its page token may be the backend's own task id.
    "/checkpoint.v1.TaskService/List",
];

fn generate_call(rng: &mut Rng, run_id: String, task_id: String) -> Call {
    let idempotency_key = rng.pick(&[String::new(), "key-1".to_owned(), "k\0".to_owned()]);
    let n = rng.below(30);
    match n {
        0..=3 => (
            "/checkpoint.v1.CheckpointService/Save",
            SaveRequest {
                tool_count: None,
                run_id,
                step: rng.int(),
                content_type: rng.string(),
                state: rng.bytes(),
                messages: (0..rng.below(3))
                    .map(|_| Message {
                        role: rng.string(),
                        content: rng.bytes(),
                    })
                    .collect(),
                message_offset: rng.unsigned(),
                metadata: [(rng.string(), rng.string())].into(),
                epoch: (rng.below(2) == 0).then(|| rng.unsigned()),
                checksum: (rng.below(4) == 0).then(|| rng.string()),
                label: rng.string(),
            }
            .encode_to_vec(),
        ),
        4 => (
            "/checkpoint.v1.CheckpointService/LoadLatest",
            LoadLatestRequest {
                run_id,
                message_offset: rng.unsigned(),
                journal: rng.int() as i32,
                capabilities: rng.capabilities(),
            }
            .encode_to_vec(),
        ),
        5 => (
            "/checkpoint.v1.CheckpointService/LoadAtStep",
            LoadAtStepRequest {
                run_id,
                step: rng.int(),
                message_offset: rng.unsigned(),
                label: rng.string(),
                journal: rng.int() as i32,
                capabilities: rng.capabilities(),
                // Never a token a server issued: those differ between backends (ids).
                continuation: if rng.below(3) == 0 {
                    rng.bytes()
                } else {
                    Vec::new()
                },
            }
            .encode_to_vec(),
        ),
        6 => (
            "/checkpoint.v1.CheckpointService/Validate",
            ValidateRequest {
                run_id,
                step: (rng.below(2) == 0).then(|| rng.int()),
            }
            .encode_to_vec(),
        ),
        7 => (
            "/checkpoint.v1.CheckpointService/Resume",
            ResumeRequest {
                run_id,
                message_offset: rng.unsigned(),
                require_existing: rng.below(2) == 0,
                // Any value, known or not, declared or not.
                capabilities: vec![rng.int() as i32],
            }
            .encode_to_vec(),
        ),
        9 => (
            "/checkpoint.v1.CheckpointService/RecordToolResults",
            RecordToolResultsRequest {
                run_id,
                epoch: (rng.below(2) == 0).then(|| rng.unsigned()),
                results: (0..rng.below(4))
                    .map(|_| ToolResultInput {
                        call_id: rng.string(),
                        tool_name: rng.string(),
                        step: rng.int(),
                        output: rng.bytes(),
                        is_error: rng.below(2) == 0,
                        arguments_digest: rng.string(),
                    })
                    .collect(),
            }
            .encode_to_vec(),
        ),
        8 => (
            "/checkpoint.v1.CheckpointService/RecordToolResult",
            RecordToolResultRequest {
                run_id,
                call_id: rng.string(),
                tool_name: rng.string(),
                step: rng.int(),
                output: rng.bytes(),
                is_error: rng.below(2) == 0,
                epoch: (rng.below(2) == 0).then(|| rng.unsigned()),
                arguments_digest: rng.string(),
            }
            .encode_to_vec(),
        ),
        10 => (
            "/checkpoint.v1.CheckpointService/ListCheckpoints",
            ListCheckpointsRequest {
                run_id,
                page_size: rng.pick(&[0, 1, 1000, 5000]),
                page_token: rng.pick(&["", "1", "-4", "x"]).to_owned(),
                descending: rng.below(2) == 0,
                before_step: (rng.below(2) == 0).then(|| rng.int()),
                metadata_filter: [(rng.string(), rng.string())].into(),
            }
            .encode_to_vec(),
        ),
        11 => (
            "/checkpoint.v1.CheckpointService/DeleteRun",
            DeleteRunRequest { run_id }.encode_to_vec(),
        ),
        12 => (
            "/checkpoint.v1.CheckpointService/SetRetention",
            SetRetentionRequest {
                run_id,
                policy: rng
                    .pick(&["", "all", "keep_last:2", "keep_last:0", "max_age:1h", "x\0"])
                    .to_owned(),
            }
            .encode_to_vec(),
        ),
        13 if rng.below(2) == 0 => (
            "/checkpoint.v1.CheckpointService/PinCheckpoint",
            PinCheckpointRequest {
                run_id,
                step: rng.int(),
            }
            .encode_to_vec(),
        ),
        13 => (
            "/checkpoint.v1.CheckpointService/UnpinCheckpoint",
            UnpinCheckpointRequest {
                run_id,
                step: rng.int(),
                all_sources: rng.below(2) == 0,
            }
            .encode_to_vec(),
        ),
        14 | 15 => (
            "/checkpoint.v1.TaskService/Enqueue",
            EnqueueRequest {
                run_id,
                input: rng.bytes(),
                idempotency_key,
                auto_resume_hitl: rng.pick(&[None, Some(false), Some(true)]),
                retry_policy: (rng.below(2) == 0).then(|| RetryPolicy {
                    initial_delay: rng.duration(),
                    multiplier: rng.pick(&[0.0, 1.5, -1.0, f64::NAN, f64::INFINITY]),
                    max_delay: rng.duration(),
                    jitter: rng.pick(&[None, Some(0.2), Some(-1.0), Some(f64::NAN)]),
                    max_attempts: rng.pick(&[0, 1, 3, u32::MAX]),
                }),
            }
            .encode_to_vec(),
        ),
        16 => (
            "/checkpoint.v1.TaskService/Claim",
            ClaimRequest {
                worker_id: rng.string(),
                lease_duration: rng.duration(),
                batch_size: rng.pick(&[0, 1, 2, 10_000]),
            }
            .encode_to_vec(),
        ),
        17 => (
            "/checkpoint.v1.TaskService/Heartbeat",
            HeartbeatRequest {
                task_id,
                attempt: rng.unsigned(),
                lease_duration: rng.duration(),
            }
            .encode_to_vec(),
        ),
        18 => (
            "/checkpoint.v1.TaskService/Complete",
            CompleteRequest {
                task_id,
                attempt: rng.unsigned(),
                result: rng.bytes(),
            }
            .encode_to_vec(),
        ),
        19 => (
            "/checkpoint.v1.TaskService/Fail",
            FailRequest {
                task_id,
                attempt: rng.unsigned(),
                error: rng.string(),
                error_class: rng.pick(&[0, 1, 2, 99]),
            }
            .encode_to_vec(),
        ),
        20 if rng.below(2) == 0 => (
            "/checkpoint.v1.TaskService/Release",
            ReleaseRequest {
                task_id,
                attempt: rng.unsigned(),
            }
            .encode_to_vec(),
        ),
        20 => (
            "/checkpoint.v1.TaskService/RequestApproval",
            RequestApprovalRequest {
                task_id,
                attempt: rng.unsigned(),
                action: rng.string(),
                details: rng.bytes(),
            }
            .encode_to_vec(),
        ),
        21 if rng.below(2) == 0 => (
            "/checkpoint.v1.TaskService/Approve",
            ApproveRequest {
                task_id,
                decided_by: rng.string(),
                comment: rng.string(),
            }
            .encode_to_vec(),
        ),
        21 => (
            "/checkpoint.v1.TaskService/Reject",
            RejectRequest {
                task_id,
                decided_by: rng.string(),
                comment: rng.string(),
            }
            .encode_to_vec(),
        ),
        22 => match rng.below(3) {
            0 => (
                "/checkpoint.v1.TaskService/Get",
                GetRequest { task_id }.encode_to_vec(),
            ),
            1 => (
                "/checkpoint.v1.TaskService/Cancel",
                CancelRequest { task_id }.encode_to_vec(),
            ),
            _ => (
                "/checkpoint.v1.TaskService/Requeue",
                RequeueRequest { task_id }.encode_to_vec(),
            ),
        },
        23 => (
            "/checkpoint.v1.CheckpointService/RecordToolIntent",
            RecordToolIntentRequest {
                run_id,
                call_id: rng.string(),
                tool_name: rng.string(),
                step: rng.int(),
                epoch: rng.pick(&[None, Some(0), Some(1), Some(u64::MAX)]),
                arguments_digest: rng.string(),
            }
            .encode_to_vec(),
        ),
        24 => (
            "/checkpoint.v1.CheckpointService/GetJournal",
            GetJournalRequest { run_id }.encode_to_vec(),
        ),
        25 => (
            "/checkpoint.v1.CheckpointService/RepairJournal",
            RepairJournalRequest {
                run_id,
                call_id: rng.string(),
                actor: rng.string(),
                repair: match rng.below(3) {
                    0 => None,
                    1 => Some(repair_journal_request::Repair::MarkDoneOutput(rng.bytes())),
                    _ => Some(repair_journal_request::Repair::Drop(rng.below(2) == 0)),
                },
            }
            .encode_to_vec(),
        ),
        26 => (
            "/checkpoint.v1.TaskService/ResumeTask",
            ResumeTaskRequest { task_id }.encode_to_vec(),
        ),
        28 => (
            "/checkpoint.v1.CheckpointService/GetRun",
            GetRunRequest { run_id }.encode_to_vec(),
        ),
        29 => {
            let other = rng.string();
            (
                "/checkpoint.v1.CheckpointService/ListRuns",
                ListRunsRequest {
                    page_size: rng.pick(&[0, 1, 1000, 5000]),
                    // A page token is a run id, so it may be any of the generated ones.
                    page_token: rng.pick(&[String::new(), run_id.clone()]),
                    run_id_prefix: rng.pick(&[String::new(), run_id, other]),
                }
                .encode_to_vec(),
            )
        }
        _ => (
            "/checkpoint.v1.TaskService/List",
            ListRequest {
                state: rng.pick(&[0, 1, 5, 42, -1]),
                page_size: rng.pick(&[0, 3, 5000]),
                page_token: rng.pick(&[String::new(), task_id]),
            }
            .encode_to_vec(),
        ),
    }
}

/// Flips, cuts or pads the encoded bytes of one call in four.
fn mangle(rng: &mut Rng, mut body: Vec<u8>) -> Vec<u8> {
    if rng.below(4) != 0 || body.is_empty() {
        return body;
    }
    let at = rng.below(body.len() as u64) as usize;
    match rng.below(3) {
        0 => body[at] ^= 1 << rng.below(8),
        1 => body.truncate(at),
        _ => body.extend((0..rng.below(8)).map(|_| rng.next() as u8)),
    }
    body
}

/// The code a call ended with, and the task it enqueued, if it did.
async fn call(channel: &Channel, (path, body): Call) -> (Code, Option<String>) {
    if path.ends_with("/Enqueue") {
        return match raw_call::<EnqueueResponse>(channel, path, body).await {
            Ok(reply) => (Code::Ok, reply.task.map(|task| task.task_id)),
            Err(status) => (status.code(), None),
        };
    }
    match raw_call::<()>(channel, path, body).await {
        Ok(()) => (Code::Ok, None),
        Err(status) => (status.code(), None),
    }
}

#[tokio::test]
async fn random_requests_get_the_same_code_on_every_backend_and_never_internal() {
    let seed = std::env::var("CHECKPOINTD_FUZZ_SEED")
        .ok()
        .and_then(|raw| raw.parse().ok())
        .unwrap_or(0x5eed_c0de_u64);
    let budget = std::env::var("CHECKPOINTD_FUZZ_SECONDS")
        .ok()
        .and_then(|raw| raw.parse().ok())
        .map(Duration::from_secs);
    let backends = [Backend::Memory, Backend::Sqlite, Backend::Postgres];
    let mut apps: Vec<TestApp> = Vec::new();
    for backend in backends {
        apps.push(spawn_app_with(backend, settings_without_timers()).await);
    }
    let mut channels = Vec::new();
    for app in &apps {
        channels.push(app.channel().await);
    }
    // The latest task each backend issued: the same request names each backend's own id.
    let mut tasks = vec![String::new(); backends.len()];
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut case = 0u64;
    while budget.map_or(case < DEFAULT_CASES, |budget| started.elapsed() < budget) {
        let case_rng = Rng(rng.next() | 1);
        let mut answers = Vec::new();
        for (index, channel) in channels.iter().enumerate() {
            let mut rng = case_rng.clone();
            let ((path, body), mangleable) = generate(&mut rng, &tasks[index]);
            let body = if mangleable {
                mangle(&mut rng, body)
            } else {
                body
            };
            let (code, enqueued) = call(channel, (path, body)).await;
            if let Some(task) = enqueued {
                tasks[index] = task;
            }
            answers.push((path, code));
        }
        let context = format!("case {case} (seed {seed:#x}): {answers:?}");
        assert!(
            answers.iter().all(|(_, code)| *code == answers[0].1),
            "backends disagree on {context}"
        );
        assert!(
            !matches!(answers[0].1, Code::Internal | Code::Unknown),
            "{context}"
        );
        case += 1;
    }
    for channel in &channels {
        let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
        health
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await
            .expect("the server still answers");
    }
}
