//! The checkpointd calls the runner makes, as a trait: gRPC in production ([`Clients`]), an
//! in-memory double in tests of the recovery loop.
//!
//! [`Clients`]: crate::client::Clients

use async_trait::async_trait;
use tonic::Status;

use crate::proto::{
    ClaimRequest, CompleteRequest, FailRequest, HeartbeatRequest, RecordToolIntentRequest,
    RecordToolIntentResponse, RecordToolResultRequest, ReleaseRequest, RequestApprovalRequest,
    ResumeRequest, ResumeResponse, SaveRequest, Task, ToolResult,
};

/// Every RPC the runner makes, with the replies reduced to what it reads.
#[async_trait]
pub trait RunnerApi: Send + Sync + 'static {
    /// Resume: a new fencing epoch, the latest valid checkpoint and the whole tool journal.
    async fn resume(&self, request: ResumeRequest) -> Result<ResumeResponse, Status>;
    /// Save; OK means durable.
    async fn save(&self, request: SaveRequest) -> Result<(), Status>;
    /// RecordToolResult: the journalled result (the stored one for a known call id).
    async fn record_tool_result(
        &self,
        request: RecordToolResultRequest,
    ) -> Result<ToolResult, Status>;
    /// RecordToolIntent: the journalled intent with its idempotency key, and the call's
    /// result when it completed already.
    async fn record_tool_intent(
        &self,
        request: RecordToolIntentRequest,
    ) -> Result<RecordToolIntentResponse, Status>;
    /// Claim: the tasks leased to this worker.
    async fn claim(&self, request: ClaimRequest) -> Result<Vec<Task>, Status>;
    async fn heartbeat(&self, request: HeartbeatRequest) -> Result<(), Status>;
    async fn complete(&self, request: CompleteRequest) -> Result<(), Status>;
    async fn fail(&self, request: FailRequest) -> Result<(), Status>;
    async fn release(&self, request: ReleaseRequest) -> Result<(), Status>;
    async fn request_approval(&self, request: RequestApprovalRequest) -> Result<(), Status>;
}
