//! The `CheckpointService` adapter: parse the request, call the engine, convert the answer.

use tonic::{Request, Response, Status};

use super::convert::{
    checkpoint_to_wire, message_from_wire, summary_to_wire, timestamp, tool_to_wire, tools_to_wire,
    verdict_to_wire,
};
use super::retention_api::{self, VerdictStream};
use super::tenant::run_key;
use crate::domain::{CallId, Checksum, NewCheckpoint, NewToolResult, RunKey, Step};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::proto::{self, checkpoint_service_server::CheckpointService};

/// Longest content type, tool name or message role accepted, in bytes.
const MAX_LABEL_BYTES: usize = 256;

/// Serves `checkpoint.v1.CheckpointService` on top of an [`Engine`].
#[derive(Clone)]
pub struct CheckpointApi {
    engine: Engine,
    max_request_bytes: usize,
}

impl CheckpointApi {
    pub fn new(engine: Engine, max_request_bytes: usize) -> Self {
        Self {
            engine,
            max_request_bytes,
        }
    }

    fn check_size(&self, request: &impl prost::Message) -> Result<()> {
        let size = request.encoded_len();
        if size > self.max_request_bytes {
            return Err(Error::TooLarge(format!(
                "request is {size} bytes; the limit is {} (--max-request-bytes)",
                self.max_request_bytes
            )));
        }
        Ok(())
    }
}

fn check_label(kind: &str, value: &str) -> Result<()> {
    if value.len() > MAX_LABEL_BYTES {
        return Err(Error::InvalidArgument(format!(
            "{kind} is {} bytes; the limit is {MAX_LABEL_BYTES}",
            value.len()
        )));
    }
    Ok(())
}

fn parse_save(run: RunKey, request: proto::SaveRequest) -> Result<NewCheckpoint> {
    let step = Step::parse(request.step)?;
    check_label("content_type", &request.content_type)?;
    for message in &request.messages {
        check_label("message role", &message.role)?;
    }
    let client_checksum = request
        .checksum
        .as_deref()
        .map(Checksum::parse_hex)
        .transpose()?;
    Ok(NewCheckpoint {
        run,
        step,
        content_type: request.content_type,
        state: request.state,
        messages: request
            .messages
            .into_iter()
            .map(message_from_wire)
            .collect(),
        message_offset: request.message_offset,
        metadata: request.metadata.into_iter().collect(),
        epoch: request.epoch.unwrap_or(0),
        client_checksum,
    })
}

fn parse_tool_result(
    run: RunKey,
    request: proto::RecordToolResultRequest,
) -> Result<NewToolResult> {
    let call_id = CallId::parse(&request.call_id)?;
    if request.tool_name.is_empty() {
        return Err(Error::InvalidArgument("tool_name must not be empty".into()));
    }
    check_label("tool_name", &request.tool_name)?;
    Ok(NewToolResult {
        run,
        call_id,
        tool_name: request.tool_name,
        step: Step::parse(request.step)?,
        output: request.output,
        is_error: request.is_error,
        epoch: request.epoch.unwrap_or(0),
    })
}

#[tonic::async_trait]
impl CheckpointService for CheckpointApi {
    #[tracing::instrument(name = "checkpoint.save", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.step = request.get_ref().step,
        checkpoint.bytes = request.get_ref().state.len(),
    ))]
    async fn save(
        &self,
        request: Request<proto::SaveRequest>,
    ) -> Result<Response<proto::SaveResponse>, Status> {
        self.check_size(request.get_ref())?;
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let checkpoint = parse_save(run, request.into_inner())?;
        let saved = self.engine.save(&checkpoint).await?;
        Ok(Response::new(proto::SaveResponse {
            checkpoint_id: saved.id,
            checksum: saved.checksum.to_hex(),
            created_at: Some(timestamp(saved.created_at)),
            already_existed: saved.already_existed,
        }))
    }

    #[tracing::instrument(name = "checkpoint.load_latest", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn load_latest(
        &self,
        request: Request<proto::LoadLatestRequest>,
    ) -> Result<Response<proto::LoadLatestResponse>, Status> {
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let restored = self.engine.load_latest(&run).await?;
        Ok(Response::new(proto::LoadLatestResponse {
            checkpoint: Some(checkpoint_to_wire(restored.checkpoint)),
            tool_results: tools_to_wire(restored.tool_results),
            skipped_steps: restored.skipped_steps.iter().map(|s| s.as_i64()).collect(),
        }))
    }

    #[tracing::instrument(name = "checkpoint.load_at_step", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.step = request.get_ref().step,
    ))]
    async fn load_at_step(
        &self,
        request: Request<proto::LoadAtStepRequest>,
    ) -> Result<Response<proto::LoadAtStepResponse>, Status> {
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let step = Step::parse(request.get_ref().step)?;
        let restored = self.engine.load_at_step(&run, step).await?;
        Ok(Response::new(proto::LoadAtStepResponse {
            checkpoint: Some(checkpoint_to_wire(restored.checkpoint)),
            tool_results: tools_to_wire(restored.tool_results),
        }))
    }

    #[tracing::instrument(name = "checkpoint.validate", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn validate(
        &self,
        request: Request<proto::ValidateRequest>,
    ) -> Result<Response<proto::ValidateResponse>, Status> {
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let step = request.get_ref().step.map(Step::parse).transpose()?;
        let verdicts = self.engine.validate(&run, step).await?;
        Ok(Response::new(proto::ValidateResponse {
            verdicts: verdicts.into_iter().map(verdict_to_wire).collect(),
        }))
    }

    #[tracing::instrument(name = "checkpoint.resume", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn resume(
        &self,
        request: Request<proto::ResumeRequest>,
    ) -> Result<Response<proto::ResumeResponse>, Status> {
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let resumed = self.engine.resume(&run).await?;
        let recovered_from_step = resumed
            .checkpoint
            .as_ref()
            .map(|checkpoint| checkpoint.step.as_i64())
            .unwrap_or(0);
        Ok(Response::new(proto::ResumeResponse {
            restarted_from_scratch: resumed.checkpoint.is_none(),
            checkpoint: resumed.checkpoint.map(checkpoint_to_wire),
            recovered_from_step,
            skipped_steps: resumed.skipped_steps.iter().map(|s| s.as_i64()).collect(),
            tool_results: tools_to_wire(resumed.tool_results),
            epoch: resumed.epoch,
        }))
    }

    #[tracing::instrument(name = "checkpoint.record_tool_result", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.step = request.get_ref().step,
    ))]
    async fn record_tool_result(
        &self,
        request: Request<proto::RecordToolResultRequest>,
    ) -> Result<Response<proto::RecordToolResultResponse>, Status> {
        self.check_size(request.get_ref())?;
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let result = parse_tool_result(run, request.into_inner())?;
        let (record, already_recorded) = self.engine.record_tool_result(&result).await?;
        Ok(Response::new(proto::RecordToolResultResponse {
            result: Some(tool_to_wire(record)),
            already_recorded,
        }))
    }

    #[tracing::instrument(name = "checkpoint.list", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn list_checkpoints(
        &self,
        request: Request<proto::ListCheckpointsRequest>,
    ) -> Result<Response<proto::ListCheckpointsResponse>, Status> {
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let page_size = request.get_ref().page_size as usize;
        let (page, next) = self
            .engine
            .list(&run, page_size, &request.get_ref().page_token)
            .await?;
        Ok(Response::new(proto::ListCheckpointsResponse {
            checkpoints: page.into_iter().map(summary_to_wire).collect(),
            next_page_token: next.map(|step| step.to_string()).unwrap_or_default(),
        }))
    }

    #[tracing::instrument(name = "checkpoint.delete_run", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn delete_run(
        &self,
        request: Request<proto::DeleteRunRequest>,
    ) -> Result<Response<proto::DeleteRunResponse>, Status> {
        let run = run_key(request.metadata(), &request.get_ref().run_id)?;
        let deleted_checkpoints = self.engine.delete_run(&run).await?;
        Ok(Response::new(proto::DeleteRunResponse {
            deleted_checkpoints,
        }))
    }

    #[tracing::instrument(name = "checkpoint.set_retention", skip_all, fields(
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn set_retention(
        &self,
        request: Request<proto::SetRetentionRequest>,
    ) -> Result<Response<proto::SetRetentionResponse>, Status> {
        Ok(Response::new(
            retention_api::set_retention(&self.engine, request).await?,
        ))
    }

    #[tracing::instrument(name = "checkpoint.pin", skip_all, fields(
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.step = request.get_ref().step,
    ))]
    async fn pin_checkpoint(
        &self,
        request: Request<proto::PinCheckpointRequest>,
    ) -> Result<Response<proto::PinCheckpointResponse>, Status> {
        Ok(Response::new(
            retention_api::pin(&self.engine, request).await?,
        ))
    }

    #[tracing::instrument(name = "checkpoint.unpin", skip_all, fields(
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.step = request.get_ref().step,
    ))]
    async fn unpin_checkpoint(
        &self,
        request: Request<proto::UnpinCheckpointRequest>,
    ) -> Result<Response<proto::UnpinCheckpointResponse>, Status> {
        Ok(Response::new(
            retention_api::unpin(&self.engine, request).await?,
        ))
    }

    type ValidateTenantStream = VerdictStream;

    #[tracing::instrument(name = "checkpoint.validate_tenant", skip_all)]
    async fn validate_tenant(
        &self,
        request: Request<proto::ValidateTenantRequest>,
    ) -> Result<Response<VerdictStream>, Status> {
        Ok(Response::new(retention_api::validate_tenant(
            &self.engine,
            request,
        )?))
    }
}
