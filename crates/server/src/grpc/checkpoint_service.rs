//! The `CheckpointService` adapter: parse the request, call the engine (or the retention
//! service), convert the answer.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use super::convert::{
    checkpoint_to_wire, in_doubt_to_wire, journal_to_wire, step_after_page_token, summary_to_wire,
    verdict_to_wire,
};
use super::retention_api::{self, VerdictStream};
use super::tenant::run_key;
use crate::domain::{
    CallId, Checksum, Epoch, NewCheckpoint, NewToolResult, PageSize, RunKey, Step, check_label,
    check_text,
};
use crate::error::{Error, Result};
use crate::proto::{self, checkpoint_service_server::CheckpointService};
use crate::service::{Engine, RetentionService};
use crate::store::RetentionStore;
use crate::wire::{message_from_wire, timestamp, tool_to_wire};

mod journal_api;

/// Serves `checkpoint.v1.CheckpointService` on top of an [`Engine`] and a [`RetentionService`].
#[derive(Clone)]
pub struct CheckpointApi {
    engine: Engine,
    retention: RetentionService,
    /// What ValidateTenant's scrub pages through.
    scrub_listing: Arc<dyn RetentionStore>,
    max_request_bytes: usize,
}

impl CheckpointApi {
    /// `retention` is the store itself, never a cache: pins, policies and the scrub's listing.
    pub fn new(
        engine: Engine,
        retention: Arc<dyn RetentionStore>,
        max_request_bytes: usize,
    ) -> Self {
        Self {
            engine,
            retention: RetentionService::new(retention.clone()),
            scrub_listing: retention,
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

impl CheckpointApi {
    /// Fills in who pins each listed checkpoint, from the retention facts of the caller's own
    /// run (pins live beside retention, not in the checkpoint rows the listing reads).
    async fn add_pins(&self, run: &RunKey, page: &mut [proto::CheckpointSummary]) -> Result<()> {
        let Some(facts) = self.scrub_listing.retention_facts(run).await? else {
            return Ok(());
        };
        let mut pins: std::collections::HashMap<i64, Vec<String>> = facts
            .checkpoints
            .into_iter()
            .filter(|facts| facts.pinned())
            .map(|facts| (facts.step.as_i64(), facts.pinned_by))
            .collect();
        for summary in page {
            summary.pinned_by = pins.remove(&summary.step).unwrap_or_default();
        }
        Ok(())
    }
}

fn parse_save(run: RunKey, request: proto::SaveRequest) -> Result<NewCheckpoint> {
    let step = Step::parse(request.step)?;
    check_label("content_type", &request.content_type)?;
    for message in &request.messages {
        check_label("message role", &message.role)?;
    }
    for (key, value) in &request.metadata {
        check_label("metadata key", key)?;
        check_text("metadata value", value)?;
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
        epoch: Epoch::from_wire(request.epoch).get(),
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
        epoch: Epoch::from_wire(request.epoch).get(),
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
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
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
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
        let restored = self.engine.load_latest(&run).await?;
        let (tool_results, tool_intents) = journal_to_wire(&run, restored.tool_results);
        Ok(Response::new(proto::LoadLatestResponse {
            checkpoint: Some(checkpoint_to_wire(restored.checkpoint)),
            tool_results,
            skipped_steps: restored.skipped_steps.iter().map(|s| s.as_i64()).collect(),
            tool_intents,
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
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
        let step = Step::parse(request.get_ref().step)?;
        let restored = self.engine.load_at_step(&run, step).await?;
        let (tool_results, tool_intents) = journal_to_wire(&run, restored.tool_results);
        Ok(Response::new(proto::LoadAtStepResponse {
            checkpoint: Some(checkpoint_to_wire(restored.checkpoint)),
            tool_results,
            tool_intents,
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
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
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
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
        let resumed = self.engine.resume(&run).await?;
        let recovered_from_step = resumed
            .checkpoint
            .as_ref()
            .map(|checkpoint| checkpoint.step.as_i64())
            .unwrap_or(0);
        let (tool_results, tool_intents) = journal_to_wire(&run, resumed.tool_results);
        Ok(Response::new(proto::ResumeResponse {
            restarted_from_scratch: resumed.checkpoint.is_none(),
            checkpoint: resumed.checkpoint.map(checkpoint_to_wire),
            recovered_from_step,
            skipped_steps: resumed.skipped_steps.iter().map(|s| s.as_i64()).collect(),
            tool_results,
            epoch: resumed.epoch,
            tool_intents,
            in_doubt: resumed
                .in_doubt
                .into_iter()
                .map(|call| in_doubt_to_wire(&run, call))
                .collect(),
            corrupt_call_ids: resumed.corrupt_call_ids,
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
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
        let result = parse_tool_result(run, request.into_inner())?;
        let (record, already_recorded) = self.engine.record_tool_result(&result).await?;
        Ok(Response::new(proto::RecordToolResultResponse {
            result: Some(tool_to_wire(record)),
            already_recorded,
        }))
    }

    #[tracing::instrument(name = "checkpoint.record_tool_intent", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.step = request.get_ref().step,
    ))]
    async fn record_tool_intent(
        &self,
        request: Request<proto::RecordToolIntentRequest>,
    ) -> Result<Response<proto::RecordToolIntentResponse>, Status> {
        Ok(Response::new(
            journal_api::record_tool_intent(&self.engine, request).await?,
        ))
    }

    #[tracing::instrument(name = "checkpoint.get_journal", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn get_journal(
        &self,
        request: Request<proto::GetJournalRequest>,
    ) -> Result<Response<proto::GetJournalResponse>, Status> {
        Ok(Response::new(
            journal_api::get_journal(&self.engine, request).await?,
        ))
    }

    #[tracing::instrument(name = "checkpoint.repair_journal", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn repair_journal(
        &self,
        request: Request<proto::RepairJournalRequest>,
    ) -> Result<Response<proto::RepairJournalResponse>, Status> {
        self.check_size(request.get_ref())?;
        Ok(Response::new(
            journal_api::repair_journal(&self.engine, request).await?,
        ))
    }

    #[tracing::instrument(name = "checkpoint.list", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn list_checkpoints(
        &self,
        request: Request<proto::ListCheckpointsRequest>,
    ) -> Result<Response<proto::ListCheckpointsResponse>, Status> {
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
        let page_size = PageSize::parse(request.get_ref().page_size)?;
        let after = step_after_page_token(&request.get_ref().page_token)?;
        let (page, next) = self.engine.list(&run, page_size, after).await?;
        let mut checkpoints: Vec<_> = page.into_iter().map(summary_to_wire).collect();
        if !checkpoints.is_empty() {
            self.add_pins(&run, &mut checkpoints).await?;
        }
        Ok(Response::new(proto::ListCheckpointsResponse {
            checkpoints,
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
        let run = run_key(request.extensions(), &request.get_ref().run_id)?;
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
            retention_api::set_retention(&self.retention, request).await?,
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
            retention_api::pin(&self.retention, request).await?,
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
            retention_api::unpin(&self.retention, request).await?,
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
            &self.scrub_listing,
            request,
        )?))
    }
}
