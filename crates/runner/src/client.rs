//! gRPC clients of checkpointd that carry the tenant header and the credential on every call.

use std::time::Duration;

use async_trait::async_trait;
use checkpointd_protocol::TENANT_HEADER;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Request, Status};

use crate::api::RunnerApi;
use crate::dial::{AUTHORIZATION_HEADER, Dial};
use crate::pages;
use crate::proto::checkpoint_service_client::CheckpointServiceClient;
use crate::proto::task_service_client::TaskServiceClient;
use crate::proto::{
    ClaimRequest, CompleteRequest, FailRequest, HeartbeatRequest, LoadAtStepRequest,
    LoadAtStepResponse, LoadLatestRequest, LoadLatestResponse, RecordToolIntentRequest,
    RecordToolIntentResponse, RecordToolResultRequest, ReleaseRequest, RequestApprovalRequest,
    ResumeRequest, ResumeResponse, SaveRequest, Task, ToolResult,
};

/// Adds `x-tenant-id` to each request when a tenant is configured, `authorization` when a
/// token is, and the current span's W3C `traceparent` when trace export is on.
#[derive(Clone, Debug, Default)]
pub struct TenantHeader {
    tenant: Option<MetadataValue<Ascii>>,
    authorization: Option<MetadataValue<Ascii>>,
}

impl Interceptor for TenantHeader {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(tenant) = &self.tenant {
            request.metadata_mut().insert(TENANT_HEADER, tenant.clone());
        }
        if let Some(authorization) = &self.authorization {
            request
                .metadata_mut()
                .insert(AUTHORIZATION_HEADER, authorization.clone());
        }
        checkpointd_telemetry::propagation::inject_current(request.metadata_mut());
        Ok(request)
    }
}

pub type Checkpoints = CheckpointServiceClient<InterceptedService<Channel, TenantHeader>>;
pub type Tasks = TaskServiceClient<InterceptedService<Channel, TenantHeader>>;

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
        let server = dial.url();
        let tenant = match tenant {
            Some(tenant) => Some(
                tenant
                    .parse()
                    .map_err(|_| format!("tenant {tenant:?} is not a valid header value"))?,
            ),
            None => None,
        };
        let header = TenantHeader {
            tenant,
            authorization: dial.authorization().cloned(),
        };
        let endpoint = dial
            .endpoint()?
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true);
        let mut last_error = String::new();
        for _ in 0..20 {
            match endpoint.connect().await {
                Ok(channel) => return Ok(Self::new(channel, header)),
                Err(error) => {
                    last_error = error_chain(&error);
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
        Err(format!(
            "cannot reach checkpointd at {server}: {last_error}"
        ))
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

    fn new(channel: Channel, header: TenantHeader) -> Self {
        // Restored histories can be large; the server caps what it accepts, not what it sends.
        let limit = 256 << 20;
        Self {
            checkpoints: CheckpointServiceClient::with_interceptor(channel.clone(), header.clone())
                .max_decoding_message_size(limit)
                .max_encoding_message_size(limit),
            tasks: TaskServiceClient::with_interceptor(channel, header)
                .max_decoding_message_size(limit),
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

/// An error and its sources on one line: a TLS failure says why only in a source.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dial::DialArgs;

    #[test]
    fn every_request_carries_the_tenant_and_the_credential() {
        let dial = DialArgs {
            token: Some("tok-1".into()),
            ..DialArgs::default()
        }
        .dial("http://127.0.0.1:1")
        .unwrap();
        let mut header = TenantHeader {
            tenant: Some("acme".parse().unwrap()),
            authorization: dial.authorization().cloned(),
        };
        let request = header.call(Request::new(())).unwrap();
        let metadata = request.metadata();
        assert_eq!(metadata.get(TENANT_HEADER).unwrap(), "acme");
        assert_eq!(metadata.get(AUTHORIZATION_HEADER).unwrap(), "Bearer tok-1");
        assert!(!format!("{header:?}").contains("tok-1"));
    }
}
