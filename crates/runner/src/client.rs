//! The runner's gRPC clients of checkpointd: both services over one connection, dialled and
//! stamped (tenant, credential, trace context) by the `checkpointd-client` crate.

use async_trait::async_trait;
pub use checkpointd_client::{CallHeaders, Checkpoints, Tasks, error_chain};
use checkpointd_client::{Patience, checkpoints, tasks};
use tonic::Status;
use tonic::transport::Channel;

use crate::api::RunnerApi;
use crate::dial::Dial;
use crate::pages;
use crate::proto::{
    ClaimRequest, CompleteRequest, FailRequest, HeartbeatRequest, LoadAtStepRequest,
    LoadAtStepResponse, LoadLatestRequest, LoadLatestResponse, RecordToolIntentRequest,
    RecordToolIntentResponse, RecordToolResultRequest, ReleaseRequest, RequestApprovalRequest,
    ResumeRequest, ResumeResponse, SaveRequest, Task, ToolResult,
};

/// The interceptor by its former name here: tenant, credential and trace context on each call.
pub type TenantHeader = CallHeaders;

/// Both services over one HTTP/2 connection.
#[derive(Clone, Debug)]
pub struct Clients {
    pub checkpoints: Checkpoints,
    pub tasks: Tasks,
}

impl Clients {
    /// Connects to `server` (for example `http://127.0.0.1:50051`) with no TLS settings or
    /// credential of its own; see [`Clients::dial`].
    pub async fn connect(server: &str, tenant: Option<&str>) -> Result<Self, String> {
        Self::dial(&Dial::plain(server)?, tenant).await
    }

    /// Connects as `dial` says, retrying briefly so a worker started alongside its server does
    /// not fail on the race.
    pub async fn dial(dial: &Dial, tenant: Option<&str>) -> Result<Self, String> {
        let headers = CallHeaders::new(dial, tenant).map_err(|error| error.to_string())?;
        let channel = dial
            .connect(&Patience::WORKER)
            .await
            .map_err(|error| error.to_string())?;
        Ok(Self::new(channel, headers))
    }

    /// LoadLatest with the whole history, however many pages the server sends it in (see
    /// [`pages`]).
    pub async fn load_latest(
        &self,
        request: LoadLatestRequest,
    ) -> Result<LoadLatestResponse, Status> {
        pages::load_latest(&self.checkpoints, request).await
    }

    /// LoadAtStep with the whole history, however many pages the server sends it in (see
    /// [`pages`]).
    pub async fn load_at_step(
        &self,
        request: LoadAtStepRequest,
    ) -> Result<LoadAtStepResponse, Status> {
        pages::load_at_step(&self.checkpoints, request).await
    }

    fn new(channel: Channel, headers: CallHeaders) -> Self {
        Self {
            checkpoints: checkpoints(channel.clone(), headers.clone()),
            tasks: tasks(channel, headers),
        }
    }
}

#[async_trait]
impl RunnerApi for Clients {
    /// Resume with the restored checkpoint's whole history (see [`pages`]).
    async fn resume(&self, request: ResumeRequest) -> Result<ResumeResponse, Status> {
        pages::resume(&self.checkpoints, request).await
    }

    async fn save(&self, request: SaveRequest) -> Result<(), Status> {
        self.checkpoints.clone().save(request).await.map(drop)
    }

    async fn record_tool_result(
        &self,
        request: RecordToolResultRequest,
    ) -> Result<ToolResult, Status> {
        self.checkpoints
            .clone()
            .record_tool_result(request)
            .await?
            .into_inner()
            .result
            .ok_or_else(|| Status::internal("RecordToolResult returned no result"))
    }

    async fn record_tool_intent(
        &self,
        request: RecordToolIntentRequest,
    ) -> Result<RecordToolIntentResponse, Status> {
        Ok(self
            .checkpoints
            .clone()
            .record_tool_intent(request)
            .await?
            .into_inner())
    }

    async fn claim(&self, request: ClaimRequest) -> Result<Vec<Task>, Status> {
        Ok(self.tasks.clone().claim(request).await?.into_inner().tasks)
    }

    async fn heartbeat(&self, request: HeartbeatRequest) -> Result<(), Status> {
        self.tasks.clone().heartbeat(request).await.map(drop)
    }

    async fn complete(&self, request: CompleteRequest) -> Result<(), Status> {
        self.tasks.clone().complete(request).await.map(drop)
    }

    async fn fail(&self, request: FailRequest) -> Result<(), Status> {
        self.tasks.clone().fail(request).await.map(drop)
    }

    async fn release(&self, request: ReleaseRequest) -> Result<(), Status> {
        self.tasks.clone().release(request).await.map(drop)
    }

    async fn request_approval(&self, request: RequestApprovalRequest) -> Result<(), Status> {
        self.tasks.clone().request_approval(request).await.map(drop)
    }
}
