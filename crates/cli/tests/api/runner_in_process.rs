//! The bundled runner in this process against a real server: every save it makes carries the
//! client's checksum v1, and the server, which verifies it, accepts it on every backend.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use checkpointd::proto::{
    ApproveRequest, ClaimRequest, CompleteRequest, EnqueueRequest, FailRequest, HeartbeatRequest,
    LoadLatestRequest, RecordToolResultRequest, ReleaseRequest, RequestApprovalRequest,
    ResumeRequest, ResumeResponse, SaveRequest, Task, ToolResult,
};
use checkpointd_runner::api::RunnerApi;
use checkpointd_runner::claimed::ClaimedTask;
use checkpointd_runner::client::Clients;
use checkpointd_runner::demo_agent::{DemoAgent, Faults};
use checkpointd_runner::events::NoEvents;
use checkpointd_runner::recovery::{Driver, RecoveryPolicy, Signals, TaskEnd, drive_task};
use checkpointd_runner::session::RunStats;
use tokio_util::sync::CancellationToken;
use tonic::Status;

use crate::support::{Backend, TestApp, spawn_app};

/// The gRPC clients, keeping the checksum field of every save that went through.
struct SaveWitness {
    clients: Clients,
    checksums: Mutex<Vec<Option<String>>>,
}

#[async_trait]
impl RunnerApi for SaveWitness {
    async fn resume(&self, request: ResumeRequest) -> Result<ResumeResponse, Status> {
        self.clients.resume(request).await
    }

    async fn save(&self, request: SaveRequest) -> Result<(), Status> {
        let checksum = request.checksum.clone();
        self.clients.save(request).await?;
        self.checksums.lock().unwrap().push(checksum);
        Ok(())
    }

    async fn record_tool_result(
        &self,
        request: RecordToolResultRequest,
    ) -> Result<ToolResult, Status> {
        self.clients.record_tool_result(request).await
    }

    async fn record_tool_intent(
        &self,
        request: checkpointd::proto::RecordToolIntentRequest,
    ) -> Result<checkpointd::proto::RecordToolIntentResponse, Status> {
        self.clients.record_tool_intent(request).await
    }

    async fn claim(&self, request: ClaimRequest) -> Result<Vec<Task>, Status> {
        self.clients.claim(request).await
    }

    async fn heartbeat(&self, request: HeartbeatRequest) -> Result<(), Status> {
        self.clients.heartbeat(request).await
    }

    async fn complete(&self, request: CompleteRequest) -> Result<(), Status> {
        self.clients.complete(request).await
    }

    async fn fail(&self, request: FailRequest) -> Result<(), Status> {
        self.clients.fail(request).await
    }

    async fn release(&self, request: ReleaseRequest) -> Result<(), Status> {
        self.clients.release(request).await
    }

    async fn request_approval(&self, request: RequestApprovalRequest) -> Result<(), Status> {
        self.clients.request_approval(request).await
    }
}

/// Claims the one pending task and drives it to the end of this attempt.
async fn claim_and_drive(witness: &Arc<SaveWitness>, agent: &DemoAgent) -> TaskEnd {
    let task = witness
        .claim(ClaimRequest {
            worker_id: "in-process".into(),
            lease_duration: Some(prost_types::Duration {
                seconds: 30,
                nanos: 0,
            }),
            batch_size: 1,
        })
        .await
        .unwrap()
        .pop()
        .expect("a claimable task");
    let driver = Driver {
        api: witness.clone(),
        events: Arc::new(NoEvents),
        policy: RecoveryPolicy {
            strategy: "every_step".parse().unwrap(),
            ..RecoveryPolicy::default()
        },
        signals: Signals {
            shutdown: CancellationToken::new(),
            lease_lost: CancellationToken::new(),
        },
    };
    let task = ClaimedTask::new(witness.clone(), task, None);
    drive_task(agent, &driver, task, &mut RunStats::default()).await
}

async fn saves_with_client_checksums_are_accepted_on(app: TestApp) {
    let backend = app.backend;
    let mut tasks = app.tasks().await;
    let task_id = tasks
        .enqueue(EnqueueRequest {
            run_id: "client-checksum".into(),
            input: b"{\"steps\":4}".to_vec(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
        .task_id;
    let witness = Arc::new(SaveWitness {
        clients: Clients::connect(&format!("http://{}", app.addr), None)
            .await
            .unwrap(),
        checksums: Mutex::new(Vec::new()),
    });
    let faults = Faults {
        approval_at_step: Some(2),
        ..Faults::default()
    };
    let agent = DemoAgent::new(faults, None, Arc::new(NoEvents));

    // Step 2 journals its lookup, then parks for approval: the journal runs ahead of the
    // checkpoint, and the next attempt's saves must count that entry too.
    let parked = claim_and_drive(&witness, &agent).await;
    assert_eq!(
        parked,
        TaskEnd::AwaitingApproval("send_email step-2".into()),
        "{backend:?}"
    );
    tasks
        .approve(ApproveRequest {
            task_id,
            decided_by: "alice".into(),
            comment: String::new(),
        })
        .await
        .unwrap();
    assert_eq!(
        claim_and_drive(&witness, &agent).await,
        TaskEnd::Completed,
        "{backend:?}"
    );

    let checksums = witness.checksums.lock().unwrap().clone();
    assert_eq!(checksums.len(), 4, "one save per step: {checksums:?}");
    assert!(checksums.iter().all(Option::is_some), "{checksums:?}");
    let latest = app
        .client()
        .await
        .load_latest(LoadLatestRequest {
            run_id: "client-checksum".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(latest.step, 4);
    assert_eq!(Some(latest.checksum), checksums.last().cloned().flatten());
}

#[tokio::test]
async fn the_runner_sends_a_checksum_with_every_save_and_the_server_accepts_it() {
    for backend in [Backend::Memory, Backend::Sqlite, Backend::Postgres] {
        saves_with_client_checksums_are_accepted_on(spawn_app(backend).await).await;
    }
}
