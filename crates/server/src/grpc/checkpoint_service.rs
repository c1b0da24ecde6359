//! The `CheckpointService` adapter: parse the request, call the engine (or the retention
//! service), convert the answer.

use crate::grpc::status::to_status;

use tonic::{Request, Response, Status};

use super::answer_budget::AnswerBudget;
use super::convert::verdict_to_wire;
use super::retention_api::{self, VerdictStream};
use super::tenant::run_key;
use crate::config::AnswerLimits;
use crate::proto::{self, checkpoint_service_server::CheckpointService};
use crate::service::{Engine, RetentionService};
use crate::wire::{message_from_wire, timestamp, tool_to_wire};
use checkpointd_core::domain::{
    Checksum, Epoch, NewCheckpoint, NewToolResult, RunKey, Step, check_label, check_text,
};
use checkpointd_core::error::{Error, Result};

mod journal_api;
mod reads_api;

/// Serves `checkpoint.v1.CheckpointService` on top of an [`Engine`] and a [`RetentionService`].
#[derive(Clone)]
pub struct CheckpointApi {
    engine: Engine,
    retention: RetentionService,
    max_request_bytes: usize,
    answers: AnswerLimits,
    answer_budget: AnswerBudget,
}

impl CheckpointApi {
    /// `retention` works on the store itself, never a cache: pins, policies and the scrub's
    /// listing.
    pub fn new(engine: Engine, retention: RetentionService, max_request_bytes: usize) -> Self {
        Self {
            engine,
            retention,
            max_request_bytes,
            answers: AnswerLimits::default(),
            answer_budget: AnswerBudget::new(AnswerLimits::default().max_inflight_bytes),
        }
    }

    /// How large the answers of loads may be.
    pub fn with_answer_limits(mut self, answers: AnswerLimits) -> Self {
        self.answers = answers;
        self.answer_budget = AnswerBudget::new(answers.max_inflight_bytes);
        self
    }

    fn answers(&self) -> reads_api::Answers<'_> {
        reads_api::Answers {
            limits: &self.answers,
            budget: &self.answer_budget,
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
        let Some(facts) = self.retention.store().retention_facts(run).await? else {
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
        check_label("message role", &message.role).map_err(|e| e.in_field("messages"))?;
    }
    for (key, value) in &request.metadata {
        check_label("metadata key", key).map_err(|e| e.in_field("metadata"))?;
        check_text("metadata value", value).map_err(|e| e.in_field("metadata"))?;
    }
    let client_checksum = request
        .checksum
        .as_deref()
        .map(Checksum::parse_hex)
        .transpose()?;
    check_label("label", &request.label)?;
    let label = Some(request.label).filter(|label| !label.is_empty());
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
        epoch: Epoch::from_wire(request.epoch),
        client_checksum,
        tool_count: request.tool_count,
        label,
    })
}

/// A RecordToolResult is judged as one entry of a RecordToolResults batch.
fn parse_tool_result(
    run: RunKey,
    request: proto::RecordToolResultRequest,
) -> Result<NewToolResult> {
    let entry = proto::ToolResultInput {
        call_id: request.call_id,
        tool_name: request.tool_name,
        step: request.step,
        output: request.output,
        is_error: request.is_error,
        arguments_digest: request.arguments_digest,
    };
    journal_api::parse_result_input(&run, Epoch::from_wire(request.epoch), entry)
}

#[tonic::async_trait]
impl CheckpointService for CheckpointApi {
    // The run id is recorded as a string, not through `%` (Display): that would format it on
    // every call once spans are exported.
    #[tracing::instrument(name = "checkpoint.save", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = request.get_ref().run_id.as_str(),
        checkpoint.step = request.get_ref().step,
        checkpoint.bytes = request.get_ref().state.len(),
    ))]
    async fn save(
        &self,
        request: Request<proto::SaveRequest>,
    ) -> Result<Response<proto::SaveResponse>, Status> {
        self.check_size(request.get_ref()).map_err(to_status)?;
        let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
        let checkpoint = parse_save(run, request.into_inner()).map_err(to_status)?;
        let saved = self.engine.save(&checkpoint).await.map_err(to_status)?;
        Ok(Response::new(proto::SaveResponse {
            checkpoint_id: saved.id,
            checksum: saved.checksum.to_hex(),
            created_at: Some(timestamp(saved.created_at)),
            already_existed: saved.already_existed,
        }))
    }

    #[tracing::instrument(name = "checkpoint.load_latest", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = request.get_ref().run_id.as_str(),
    ))]
    async fn load_latest(
        &self,
        request: Request<proto::LoadLatestRequest>,
    ) -> Result<Response<proto::LoadLatestResponse>, Status> {
        reads_api::load_latest(&self.engine, &self.answers(), request).await
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
        reads_api::load_at_step(&self.engine, &self.answers(), request).await
    }

    #[tracing::instrument(name = "checkpoint.validate", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn validate(
        &self,
        request: Request<proto::ValidateRequest>,
    ) -> Result<Response<proto::ValidateResponse>, Status> {
        let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
        let step = request
            .get_ref()
            .step
            .map(Step::parse)
            .transpose()
            .map_err(to_status)?;
        // A corrupt checkpoint found here is told by its quarantine, in the store (once).
        let verdicts = self.engine.validate(&run, step).await.map_err(to_status)?;
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
        reads_api::resume(&self.engine, &self.answers(), request).await
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
        self.check_size(request.get_ref()).map_err(to_status)?;
        let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
        let result = parse_tool_result(run, request.into_inner()).map_err(to_status)?;
        let (record, already_recorded) = self
            .engine
            .record_tool_result(&result)
            .await
            .map_err(to_status)?;
        Ok(Response::new(proto::RecordToolResultResponse {
            result: Some(tool_to_wire(record)),
            already_recorded,
        }))
    }

    #[tracing::instrument(name = "checkpoint.record_tool_results", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.results = request.get_ref().results.len(),
    ))]
    async fn record_tool_results(
        &self,
        request: Request<proto::RecordToolResultsRequest>,
    ) -> Result<Response<proto::RecordToolResultsResponse>, Status> {
        self.check_size(request.get_ref()).map_err(to_status)?;
        Ok(Response::new(
            journal_api::record_tool_results(&self.engine, request).await?,
        ))
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
        self.check_size(request.get_ref()).map_err(to_status)?;
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
        let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
        let (mut checkpoints, next_page_token) =
            reads_api::list_checkpoints(&self.engine, &request).await?;
        if !checkpoints.is_empty() {
            self.add_pins(&run, &mut checkpoints)
                .await
                .map_err(to_status)?;
        }
        Ok(Response::new(proto::ListCheckpointsResponse {
            checkpoints,
            next_page_token,
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
        let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
        let deleted_checkpoints = self.engine.delete_run(&run).await.map_err(to_status)?;
        Ok(Response::new(proto::DeleteRunResponse {
            deleted_checkpoints,
        }))
    }

    #[tracing::instrument(name = "checkpoint.delete_checkpoints", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
        checkpoint.steps = request.get_ref().steps.len(),
    ))]
    async fn delete_checkpoints(
        &self,
        request: Request<proto::DeleteCheckpointsRequest>,
    ) -> Result<Response<proto::DeleteCheckpointsResponse>, Status> {
        let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
        let request = request.get_ref();
        let steps = request
            .steps
            .iter()
            .map(|raw| Step::parse(*raw).map_err(|error| error.in_field("steps")))
            .collect::<Result<Vec<_>>>()
            .map_err(to_status)?;
        let outcome = self
            .engine
            .delete_checkpoints(&run, request.epoch.map(Epoch::new), &steps)
            .await
            .map_err(to_status)?;
        Ok(Response::new(proto::DeleteCheckpointsResponse {
            deleted_checkpoints: outcome.deleted,
            pinned_steps: outcome.pinned.iter().map(|step| step.as_i64()).collect(),
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
            retention_api::set_retention(&self.retention, request)
                .await
                .map_err(to_status)?,
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
            retention_api::pin(&self.retention, request)
                .await
                .map_err(to_status)?,
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
            retention_api::unpin(&self.retention, request)
                .await
                .map_err(to_status)?,
        ))
    }

    #[tracing::instrument(name = "checkpoint.get_run", skip_all, fields(
        otel.kind = "server",
        checkpoint.run_id = %request.get_ref().run_id,
    ))]
    async fn get_run(
        &self,
        request: Request<proto::GetRunRequest>,
    ) -> Result<Response<proto::GetRunResponse>, Status> {
        Ok(Response::new(
            reads_api::get_run(&self.engine, request).await?,
        ))
    }

    #[tracing::instrument(name = "checkpoint.list_runs", skip_all, fields(otel.kind = "server"))]
    async fn list_runs(
        &self,
        request: Request<proto::ListRunsRequest>,
    ) -> Result<Response<proto::ListRunsResponse>, Status> {
        Ok(Response::new(
            reads_api::list_runs(&self.engine, request).await?,
        ))
    }

    type ValidateTenantStream = VerdictStream;

    #[tracing::instrument(name = "checkpoint.validate_tenant", skip_all)]
    async fn validate_tenant(
        &self,
        request: Request<proto::ValidateTenantRequest>,
    ) -> Result<Response<VerdictStream>, Status> {
        Ok(Response::new(
            retention_api::validate_tenant(&self.engine, self.retention.store(), request)
                .map_err(to_status)?,
        ))
    }
}
