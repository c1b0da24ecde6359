//! The runner's client against a real `checkpointd serve` whose answers hold about 1000 bytes of
//! messages a page, on SQLite and Postgres: LoadLatest, LoadAtStep (by step, by label, from an
//! offset) and the runner's Resume hand back the whole history exactly as saved, following the
//! continuations themselves; a checkpoint deleted between pages makes the load start again, and
//! one that keeps changing fails after three restarts with the server's reason.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use checkpointd::proto::{
    Checkpoint, ClientCapability, DeleteCheckpointsRequest, GetRunRequest, LoadAtStepRequest,
    LoadAtStepResponse, LoadLatestRequest, LoadLatestResponse, Message, RecordToolResultRequest,
    ResumeRequest, ResumeResponse, SaveRequest,
};
use checkpointd_runner::api::RunnerApi;
use checkpointd_runner::client::Clients;
use checkpointd_runner::pages::{self, RESTARTS};
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::{Backend, PgSchema, ServerProcess};

const RUN: &str = "long-run";
const STEPS: i64 = 5;
const PER_STEP: usize = 10;

/// 50 messages of ~160 bytes: about eight pages of 1000 bytes for the whole history.
fn message(index: usize) -> Message {
    let letter = b'A' + (index % 26) as u8;
    let mut content = format!("{index:04}").into_bytes();
    content.extend(std::iter::repeat_n(letter, 150));
    Message {
        role: if index.is_multiple_of(2) {
            "user"
        } else {
            "assistant"
        }
        .into(),
        content,
    }
}

/// A server on `backend` with 1000-byte pages; the database lives as long as the process.
struct PagedServer {
    process: ServerProcess,
    _dir: tempfile::TempDir,
    _schema: Option<PgSchema>,
}

async fn paged_server(backend: Backend) -> PagedServer {
    let dir = tempfile::tempdir().unwrap();
    let (schema, url) = match backend {
        Backend::Sqlite => (
            None,
            format!("sqlite://{}", dir.path().join("pages.db").display()),
        ),
        Backend::Postgres => {
            let schema = PgSchema::create().await;
            let url = schema.url();
            (Some(schema), url)
        }
        Backend::Memory => panic!("a process test needs a durable backend"),
    };
    let process = ServerProcess::start(&url, &["--max-answer-message-bytes", "1000"]);
    PagedServer {
        process,
        _dir: dir,
        _schema: schema,
    }
}

/// `steps` checkpoints of PER_STEP new messages each, labelled `label-<step>`, with a tool
/// result journalled at step 2.
async fn save_long_run(clients: &Clients, steps: i64) {
    let mut checkpoints = clients.checkpoints.clone();
    for step in 1..=steps {
        let start = (step as usize - 1) * PER_STEP;
        checkpoints
            .save(SaveRequest {
                run_id: RUN.into(),
                step,
                content_type: "application/json".into(),
                state: format!("{{\"step\": {step}}}").into_bytes(),
                messages: (start..start + PER_STEP).map(message).collect(),
                message_offset: start as u64,
                metadata: HashMap::from([("step".to_owned(), step.to_string())]),
                label: format!("label-{step}"),
                ..SaveRequest::default()
            })
            .await
            .unwrap();
        if step == 2 {
            checkpoints
                .record_tool_result(RecordToolResultRequest {
                    run_id: RUN.into(),
                    call_id: "step-2/lookup/0".into(),
                    tool_name: "lookup".into(),
                    step: 2,
                    output: b"found".to_vec(),
                    ..RecordToolResultRequest::default()
                })
                .await
                .unwrap();
        }
    }
}

fn assert_whole(checkpoint: Option<Checkpoint>, step: i64, offset: usize) {
    let checkpoint = checkpoint.expect("a checkpoint");
    let count = step as usize * PER_STEP;
    assert_eq!(checkpoint.step, step);
    assert_eq!(
        checkpoint.state,
        format!("{{\"step\": {step}}}").into_bytes()
    );
    assert_eq!(checkpoint.metadata.get("step"), Some(&step.to_string()));
    assert_eq!(
        (checkpoint.messages_offset, checkpoint.message_count),
        (offset as u64, count as u64)
    );
    let expected: Vec<Message> = (offset..count).map(message).collect();
    assert!(checkpoint.messages == expected, "step {step} from {offset}");
}

async fn whole_answers_on(backend: Backend) {
    let server = paged_server(backend).await;
    let clients = Clients::connect(&format!("http://{}", server.process.addr), None)
        .await
        .unwrap();
    save_long_run(&clients, STEPS).await;

    // The server does page this history: one raw answer holds only its first page.
    let raw = clients
        .checkpoints
        .clone()
        .load_latest(LoadLatestRequest {
            run_id: RUN.into(),
            capabilities: vec![ClientCapability::PagedMessages as i32],
            ..LoadLatestRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!raw.continuation.is_empty(), "{backend:?}");
    assert!(raw.checkpoint.unwrap().messages.len() < 10, "{backend:?}");

    let latest = clients
        .load_latest(LoadLatestRequest {
            run_id: RUN.into(),
            ..LoadLatestRequest::default()
        })
        .await
        .unwrap();
    assert!(latest.continuation.is_empty());
    assert_eq!(latest.tool_results.len(), 1);
    assert_whole(latest.checkpoint, STEPS, 0);
    let by_step = clients
        .load_at_step(LoadAtStepRequest {
            run_id: RUN.into(),
            step: 4,
            ..LoadAtStepRequest::default()
        })
        .await
        .unwrap();
    assert_whole(by_step.checkpoint, 4, 0);
    let by_label = clients
        .load_at_step(LoadAtStepRequest {
            run_id: RUN.into(),
            label: "label-3".into(),
            message_offset: 7,
            ..LoadAtStepRequest::default()
        })
        .await
        .unwrap();
    assert_whole(by_label.checkpoint, 3, 7);
    let from_middle = clients
        .load_latest(LoadLatestRequest {
            run_id: RUN.into(),
            message_offset: 23,
            ..LoadLatestRequest::default()
        })
        .await
        .unwrap();
    assert_whole(from_middle.checkpoint, STEPS, 23);

    // The runner's own path: Resume through the RunnerApi, calls in doubt still declared.
    let resumed = RunnerApi::resume(
        &clients,
        ResumeRequest {
            run_id: RUN.into(),
            capabilities: vec![ClientCapability::InDoubtCalls as i32],
            ..ResumeRequest::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(resumed.recovered_from_step, STEPS);
    assert_eq!(resumed.tool_results.len(), 1);
    assert_whole(resumed.checkpoint, STEPS, 0);
}

#[tokio::test]
async fn the_runner_client_returns_a_paged_history_whole_on_every_load() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        whole_answers_on(backend).await;
    }
}

/// The runner's gRPC calls, deleting the run's latest checkpoint just before the first page of
/// each answer is asked for (up to `deletions` times), as a concurrent prune would.
struct DeleteBetweenPages {
    clients: Clients,
    deletions: Mutex<usize>,
    firsts: Mutex<usize>,
    paging: Mutex<bool>,
}

impl DeleteBetweenPages {
    fn new(clients: Clients, deletions: usize) -> Self {
        Self {
            clients,
            deletions: Mutex::new(deletions),
            firsts: Mutex::new(0),
            paging: Mutex::new(false),
        }
    }

    fn first(&self) {
        *self.firsts.lock().unwrap() += 1;
        *self.paging.lock().unwrap() = false;
    }
}

#[async_trait]
impl pages::LoadCalls for DeleteBetweenPages {
    async fn load_latest(&self, request: LoadLatestRequest) -> Result<LoadLatestResponse, Status> {
        self.first();
        pages::LoadCalls::load_latest(&self.clients.checkpoints, request).await
    }

    async fn load_at_step(&self, request: LoadAtStepRequest) -> Result<LoadAtStepResponse, Status> {
        if request.continuation.is_empty() {
            self.first();
        } else if !std::mem::replace(&mut *self.paging.lock().unwrap(), true) {
            let delete = {
                let mut left = self.deletions.lock().unwrap();
                let delete = *left > 0;
                *left = left.saturating_sub(1);
                delete
            };
            if delete {
                let mut checkpoints = self.clients.checkpoints.clone();
                let latest = checkpoints
                    .get_run(GetRunRequest { run_id: RUN.into() })
                    .await?
                    .into_inner()
                    .run
                    .and_then(|run| run.latest_step)
                    .expect("the run has a latest checkpoint");
                checkpoints
                    .delete_checkpoints(DeleteCheckpointsRequest {
                        run_id: RUN.into(),
                        steps: vec![latest],
                        epoch: None,
                    })
                    .await?;
            }
        }
        pages::LoadCalls::load_at_step(&self.clients.checkpoints, request).await
    }

    async fn resume(&self, request: ResumeRequest) -> Result<ResumeResponse, Status> {
        self.first();
        pages::LoadCalls::resume(&self.clients.checkpoints, request).await
    }
}

async fn restarts_on(backend: Backend) {
    let server = paged_server(backend).await;
    let clients = Clients::connect(&format!("http://{}", server.process.addr), None)
        .await
        .unwrap();
    save_long_run(&clients, STEPS + 1).await;

    // Step 6 goes between its pages; the second LoadLatest finds step 5, whole.
    let once = DeleteBetweenPages::new(clients.clone(), 1);
    let latest = pages::load_latest(
        &once,
        LoadLatestRequest {
            run_id: RUN.into(),
            ..LoadLatestRequest::default()
        },
    )
    .await
    .unwrap();
    assert_whole(latest.checkpoint, STEPS, 0);
    assert_eq!(*once.firsts.lock().unwrap(), 2, "{backend:?}");

    // Steps 5, 4, 3 and 2 each go between their pages: three restarts, then the error.
    let always = DeleteBetweenPages::new(clients.clone(), RESTARTS + 1);
    let error = pages::resume(
        &always,
        ResumeRequest {
            run_id: RUN.into(),
            ..ResumeRequest::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(error.code(), Code::FailedPrecondition, "{error:?}");
    assert_eq!(
        error.get_details_error_info().unwrap().reason,
        pages::CHECKPOINT_CHANGED
    );
    assert_eq!(*always.firsts.lock().unwrap(), RESTARTS + 1, "{backend:?}");
    let left = clients
        .load_latest(LoadLatestRequest {
            run_id: RUN.into(),
            ..LoadLatestRequest::default()
        })
        .await
        .unwrap();
    assert_whole(left.checkpoint, 1, 0);
}

#[tokio::test]
async fn a_checkpoint_changed_between_pages_makes_the_runner_load_again_three_times_at_most() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        restarts_on(backend).await;
    }
}
