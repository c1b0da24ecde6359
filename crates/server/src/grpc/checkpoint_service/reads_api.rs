//! The reading RPCs of `CheckpointService` that take options: LoadLatest, LoadAtStep, Resume,
//! ListCheckpoints, GetRun and ListRuns. Each parses its request once, calls the engine and
//! converts the answer.

use crate::grpc::status::to_status;
use tonic::{Request, Response, Status};

use crate::config::AnswerLimits;
use crate::grpc::answer_budget::{AnswerBudget, Reservation};
use crate::grpc::answers::{self, answer_bytes};
use crate::grpc::convert::{
    checkpoint_to_wire, in_doubt_to_wire, journal_to_wire, passed_over_to_wire,
    step_after_page_token, summary_to_wire,
};
use crate::grpc::request_budget::{Caller, ConnectionId};
use crate::grpc::tenant::{run_key, tenant_of};
use crate::proto;
use crate::service::Engine;
use crate::service::ResumeOptions;
use crate::service::checkpoints::ListRequest;
use crate::wire::timestamp;
use checkpointd_core::domain::{
    JournalScope, LoadOptions, PageSize, RunId, RunInfo, RunKey, Step, StoredCheckpoint,
    ToolRecord, check_label, check_text,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_storage::store::Which;

/// A wire `JournalScope`; a number the proto does not define is refused, not guessed at.
fn journal_scope(raw: i32) -> Result<JournalScope> {
    match proto::JournalScope::try_from(raw) {
        Ok(proto::JournalScope::Unspecified | proto::JournalScope::All) => Ok(JournalScope::All),
        Ok(proto::JournalScope::Step) => Ok(JournalScope::Step),
        Ok(proto::JournalScope::None) => Ok(JournalScope::None),
        Err(_) => Err(Error::invalid(
            "journal",
            format!("journal scope {raw} is not a JournalScope"),
        )),
    }
}

/// How large answers may be, and the budget they take their bytes from.
pub struct Answers<'a> {
    pub limits: &'a AnswerLimits,
    pub budget: &'a AnswerBudget,
}

impl Answers<'_> {
    /// Room for an answer, reserved before it is read: a page's worth (the most a paged answer's
    /// messages take), fitted to the answer once read.
    async fn reserve(&self, caller: Caller<ConnectionId>) -> Result<Reservation, Status> {
        self.budget
            .reserve(caller, self.limits.page_bytes)
            .await
            .map_err(to_status)
    }

    /// ANSWER_TOO_LARGE, before anything is reserved or read, for a client that does not page
    /// when the answer's messages would not fit: decided from stored sizes.
    async fn refuse_unpaged(
        &self,
        engine: &Engine,
        run: &RunKey,
        which: Which,
        options: &LoadOptions,
        capabilities: &[i32],
    ) -> Result<(), Status> {
        if answers::pages(capabilities) {
            return Ok(());
        }
        engine
            .refuse_unpaged_overflow(run, which, options.window())
            .await
            .map_err(to_status)
    }

    /// The continuation of an answer carrying `checkpoint` and `journal`, and its size.
    fn measure(
        &self,
        checkpoint: &StoredCheckpoint,
        journal: &[ToolRecord],
        capabilities: &[i32],
    ) -> Result<(Vec<u8>, usize), Status> {
        let continuation = self
            .limits
            .continuation(checkpoint, capabilities)
            .map_err(to_status)?;
        Ok((continuation, answer_bytes(checkpoint, journal)))
    }

    /// `message` as a response holding its share of the answer budget until it is sent.
    async fn respond<T>(
        &self,
        reservation: Reservation,
        bytes: usize,
        message: T,
    ) -> Result<Response<T>, Status> {
        let share = reservation.settle(bytes).await.map_err(to_status)?;
        let mut response = Response::new(message);
        response.extensions_mut().insert(share);
        Ok(response)
    }
}

pub async fn load_latest(
    engine: &Engine,
    answers: &Answers<'_>,
    request: Request<proto::LoadLatestRequest>,
) -> Result<Response<proto::LoadLatestResponse>, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let capabilities = &request.get_ref().capabilities;
    let options = LoadOptions {
        message_offset: request.get_ref().message_offset,
        journal: journal_scope(request.get_ref().journal).map_err(to_status)?,
        max_message_bytes: answers.limits.window_bytes(capabilities),
    };
    answers
        .refuse_unpaged(
            engine,
            &run,
            Which::LatestBelow(None),
            &options,
            capabilities,
        )
        .await?;
    let reservation = answers.reserve(Caller::of(request.extensions())).await?;
    let restored = engine
        .load_latest_with(&run, options)
        .await
        .map_err(to_status)?;
    let (continuation, bytes) =
        answers.measure(&restored.checkpoint, &restored.tool_results, capabilities)?;
    let (tool_results, tool_intents) = journal_to_wire(&run, restored.tool_results);
    let answer = proto::LoadLatestResponse {
        continuation,
        checkpoint: Some(checkpoint_to_wire(restored.checkpoint)),
        tool_results,
        skipped_steps: restored.skipped_steps.iter().map(|s| s.as_i64()).collect(),
        tool_intents,
        passed_over: passed_over_to_wire(restored.passed_over),
    };
    answers.respond(reservation, bytes, answer).await
}

pub async fn load_at_step(
    engine: &Engine,
    answers: &Answers<'_>,
    request: Request<proto::LoadAtStepRequest>,
) -> Result<Response<proto::LoadAtStepResponse>, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let reservation = answers.reserve(Caller::of(request.extensions())).await?;
    let request = request.into_inner();
    let capabilities = &request.capabilities;
    let max_message_bytes = answers.limits.window_bytes(capabilities);
    if !request.continuation.is_empty() {
        let page = answers::decode(&request.continuation).map_err(to_status)?;
        let restored = engine
            .load_next_page(&run, &page, max_message_bytes)
            .await
            .map_err(to_status)?;
        let mut checkpoint = restored.checkpoint;
        // The first page carried them; a page carries only its messages.
        checkpoint.state = Vec::new();
        checkpoint.metadata.clear();
        let (continuation, bytes) = answers.measure(&checkpoint, &[], capabilities)?;
        let answer = proto::LoadAtStepResponse {
            checkpoint: Some(checkpoint_to_wire(checkpoint)),
            tool_results: Vec::new(),
            tool_intents: Vec::new(),
            continuation,
        };
        return answers.respond(reservation, bytes, answer).await;
    }
    let options = LoadOptions {
        message_offset: request.message_offset,
        journal: journal_scope(request.journal).map_err(to_status)?,
        max_message_bytes,
    };
    let restored = if request.label.is_empty() {
        let step = Step::parse(request.step).map_err(to_status)?;
        answers
            .refuse_unpaged(engine, &run, Which::At(step), &options, capabilities)
            .await?;
        engine
            .load_at_step_with(&run, step, options)
            .await
            .map_err(to_status)?
    } else {
        check_label("label", &request.label).map_err(to_status)?;
        engine
            .load_labelled(&run, &request.label, options)
            .await
            .map_err(to_status)?
    };
    let (continuation, bytes) =
        answers.measure(&restored.checkpoint, &restored.tool_results, capabilities)?;
    let (tool_results, tool_intents) = journal_to_wire(&run, restored.tool_results);
    let answer = proto::LoadAtStepResponse {
        continuation,
        checkpoint: Some(checkpoint_to_wire(restored.checkpoint)),
        tool_results,
        tool_intents,
    };
    answers.respond(reservation, bytes, answer).await
}

pub async fn resume(
    engine: &Engine,
    answers: &Answers<'_>,
    request: Request<proto::ResumeRequest>,
) -> Result<Response<proto::ResumeResponse>, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let reservation = answers.reserve(Caller::of(request.extensions())).await?;
    let capabilities = &request.get_ref().capabilities;
    let options = ResumeOptions {
        max_message_bytes: answers.limits.window_bytes(capabilities),
        require_existing: request.get_ref().require_existing,
        message_offset: request.get_ref().message_offset,
        // Unknown values are ignored: a newer client may declare more than this server offers.
        in_doubt_calls: capabilities.contains(&(proto::ClientCapability::InDoubtCalls as i32)),
        whole_answer: !answers::pages(capabilities),
    };
    // The engine refuses an answer too large for an older client before it fences (and, should
    // a writer lengthen the log in between, before it rewinds), so `measure` below finds only
    // answers the client can take.
    let resumed = engine.resume_with(&run, options).await.map_err(to_status)?;
    let (continuation, bytes) = match &resumed.checkpoint {
        Some(checkpoint) => answers.measure(checkpoint, &resumed.tool_results, capabilities)?,
        None => (Vec::new(), 0),
    };
    let recovered_from_step = resumed
        .checkpoint
        .as_ref()
        .map(|checkpoint| checkpoint.step.as_i64())
        .unwrap_or(0);
    let (tool_results, tool_intents) = journal_to_wire(&run, resumed.tool_results);
    let answer = proto::ResumeResponse {
        restarted_from_scratch: resumed.checkpoint.is_none(),
        checkpoint: resumed.checkpoint.map(checkpoint_to_wire),
        recovered_from_step,
        skipped_steps: resumed.skipped_steps.iter().map(|s| s.as_i64()).collect(),
        tool_results,
        epoch: resumed.epoch.get(),
        tool_intents,
        in_doubt: resumed
            .in_doubt
            .into_iter()
            .map(|call| in_doubt_to_wire(&run, call))
            .collect(),
        corrupt_call_ids: resumed.corrupt_call_ids,
        continuation,
        passed_over: passed_over_to_wire(resumed.passed_over),
    };
    answers.respond(reservation, bytes, answer).await
}

/// A ListCheckpoints request as the engine takes it.
pub fn list_request(request: &proto::ListCheckpointsRequest) -> Result<ListRequest> {
    for (key, value) in &request.metadata_filter {
        check_label("metadata_filter key", key).map_err(|e| e.in_field("metadata_filter"))?;
        check_text("metadata_filter value", value).map_err(|e| e.in_field("metadata_filter"))?;
    }
    Ok(ListRequest {
        page_size: PageSize::parse(request.page_size)?,
        after: step_after_page_token(&request.page_token)?,
        descending: request.descending,
        before: request
            .before_step
            .map(|step| {
                Step::parse(step).map_err(|_| {
                    Error::invalid(
                        "before_step",
                        format!("before_step must be >= 0, got {step}"),
                    )
                })
            })
            .transpose()?,
        metadata: request
            .metadata_filter
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    })
}

pub async fn list_checkpoints(
    engine: &Engine,
    request: &Request<proto::ListCheckpointsRequest>,
) -> Result<(Vec<proto::CheckpointSummary>, String), Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let parsed = list_request(request.get_ref()).map_err(to_status)?;
    let (page, next) = engine.list(&run, &parsed).await.map_err(to_status)?;
    Ok((
        page.into_iter().map(summary_to_wire).collect(),
        next.map(|step| step.to_string()).unwrap_or_default(),
    ))
}

pub fn run_info_to_wire(info: RunInfo) -> proto::RunHead {
    proto::RunHead {
        run_id: info.run_id.as_str().to_owned(),
        epoch: info.epoch.get(),
        latest_step: info.latest_step.map(Step::as_i64),
        latest_valid_step: info.latest_valid_step.map(Step::as_i64),
        message_count: info.message_count,
        tool_count: info.tool_count,
        checkpoint_count: info.checkpoint_count,
        updated_at: Some(timestamp(info.updated_at)),
    }
}

pub async fn get_run(
    engine: &Engine,
    request: Request<proto::GetRunRequest>,
) -> Result<proto::GetRunResponse, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let info = engine.run_info(&run).await.map_err(to_status)?;
    Ok(proto::GetRunResponse {
        run: Some(run_info_to_wire(info)),
    })
}

pub async fn list_runs(
    engine: &Engine,
    request: Request<proto::ListRunsRequest>,
) -> Result<proto::ListRunsResponse, Status> {
    let tenant = tenant_of(request.extensions()).map_err(to_status)?;
    let request = request.into_inner();
    let page_size = PageSize::parse(request.page_size).map_err(to_status)?;
    check_label("run_id_prefix", &request.run_id_prefix).map_err(to_status)?;
    // The token is the last run id of the previous page, so it parses like one.
    let after = match request.page_token.as_str() {
        "" => None,
        token => Some(
            RunId::parse(token)
                .map_err(|_| Error::invalid("page_token", format!("invalid page_token {token:?}")))
                .map_err(to_status)?,
        ),
    };
    let (page, next) = engine
        .list_runs(&tenant, &request.run_id_prefix, after.as_ref(), page_size)
        .await
        .map_err(to_status)?;
    Ok(proto::ListRunsResponse {
        runs: page.into_iter().map(run_info_to_wire).collect(),
        next_page_token: next
            .map(|run_id| run_id.as_str().to_owned())
            .unwrap_or_default(),
    })
}
