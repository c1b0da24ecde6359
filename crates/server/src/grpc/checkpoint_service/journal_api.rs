//! The journal RPCs of `CheckpointService`: RecordToolResults, RecordToolIntent, GetJournal and
//! RepairJournal.

use crate::grpc::status::to_status;
use std::time::SystemTime;

use tonic::{Request, Status};

use crate::grpc::convert::{
    in_doubt_to_wire, intent_to_wire, journal_action_to_wire, journal_entry_to_wire,
};
use crate::grpc::tenant::{identity_of, run_key};
use crate::proto;
use crate::service::Engine;
use crate::wire::tool_to_wire;
use checkpointd_core::domain::check_label;
use checkpointd_core::domain::{
    ArgumentsDigest, CallId, Epoch, JournalRepair, NewToolIntent, NewToolResult, Repair, RunKey,
    Step,
};
use checkpointd_core::error::{Error, Result};

pub async fn record_tool_results(
    engine: &Engine,
    request: Request<proto::RecordToolResultsRequest>,
) -> Result<proto::RecordToolResultsResponse, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let request = request.into_inner();
    let epoch = Epoch::from_wire(request.epoch);
    let results = request
        .results
        .into_iter()
        .enumerate()
        .map(|(index, input)| {
            parse_result_input(&run, epoch, input).map_err(|error| match error {
                Error::InvalidField { field, message } => {
                    Error::invalid(format!("results[{index}].{field}"), message)
                }
                other => other,
            })
        })
        .collect::<Result<Vec<_>>>()
        .map_err(to_status)?;
    let answers = engine
        .record_tool_results(&results)
        .await
        .map_err(to_status)?;
    Ok(proto::RecordToolResultsResponse {
        results: answers
            .into_iter()
            .map(
                |(record, already_recorded)| proto::RecordToolResultResponse {
                    result: Some(tool_to_wire(record)),
                    already_recorded,
                },
            )
            .collect(),
    })
}

/// One tool result (a batch entry, or a RecordToolResult), every error naming its field.
pub(super) fn parse_result_input(
    run: &RunKey,
    epoch: Epoch,
    input: proto::ToolResultInput,
) -> Result<NewToolResult> {
    let call_id = CallId::parse(&input.call_id)?;
    if input.tool_name.is_empty() {
        return Err(Error::invalid("tool_name", "tool_name must not be empty"));
    }
    check_label("tool_name", &input.tool_name)?;
    Ok(NewToolResult {
        run: run.clone(),
        call_id,
        tool_name: input.tool_name,
        step: Step::parse(input.step)?,
        output: input.output,
        is_error: input.is_error,
        epoch,
        arguments_digest: ArgumentsDigest::parse("arguments_digest", &input.arguments_digest)?,
    })
}

pub async fn record_tool_intent(
    engine: &Engine,
    request: Request<proto::RecordToolIntentRequest>,
) -> Result<proto::RecordToolIntentResponse, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let request = request.into_inner();
    if request.tool_name.is_empty() {
        return Err(to_status(Error::InvalidArgument(
            "tool_name must not be empty".into(),
        )));
    }
    check_label("tool_name", &request.tool_name).map_err(to_status)?;
    let intent = NewToolIntent {
        run: run.clone(),
        call_id: CallId::parse(&request.call_id).map_err(to_status)?,
        tool_name: request.tool_name,
        step: Step::parse(request.step).map_err(to_status)?,
        epoch: Epoch::from_wire(request.epoch),
        arguments_digest: ArgumentsDigest::parse("arguments_digest", &request.arguments_digest)
            .map_err(to_status)?,
    };
    let outcome = engine
        .record_tool_intent(&intent)
        .await
        .map_err(to_status)?;
    Ok(proto::RecordToolIntentResponse {
        intent: outcome.intent.map(|record| intent_to_wire(&run, record)),
        already_recorded: outcome.already_recorded,
        result: outcome.result.map(tool_to_wire),
    })
}

pub async fn get_journal(
    engine: &Engine,
    request: Request<proto::GetJournalRequest>,
) -> Result<proto::GetJournalResponse, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let view = engine.journal(&run).await.map_err(to_status)?;
    let corrupt_call_ids = view.diagnosis.corrupt_call_ids();
    let corrupt = &view.diagnosis.corrupt;
    Ok(proto::GetJournalResponse {
        entries: view
            .entries
            .into_iter()
            .map(|record| {
                let damaged = corrupt.contains(&record);
                journal_entry_to_wire(record, damaged)
            })
            .collect(),
        in_doubt: view
            .diagnosis
            .in_doubt
            .into_iter()
            .map(|call| in_doubt_to_wire(&run, call))
            .collect(),
        corrupt_call_ids,
        actions: view
            .actions
            .into_iter()
            .map(journal_action_to_wire)
            .collect(),
    })
}

pub async fn repair_journal(
    engine: &Engine,
    request: Request<proto::RepairJournalRequest>,
) -> Result<proto::RepairJournalResponse, Status> {
    let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
    let identity = identity_of(request.extensions())
        .map_err(to_status)?
        .clone();
    let mut request = request.into_inner();
    if identity.authenticated {
        // Who repaired is the credential, never what the caller writes.
        request.actor = identity.subject;
    }
    if request.actor.is_empty() {
        return Err(to_status(Error::InvalidArgument(
            "actor must not be empty".into(),
        )));
    }
    check_label("actor", &request.actor).map_err(to_status)?;
    let repair = match request.repair {
        Some(proto::repair_journal_request::Repair::MarkDoneOutput(output)) => {
            Repair::MarkDone(output)
        }
        Some(proto::repair_journal_request::Repair::Drop(true)) => Repair::Drop,
        Some(proto::repair_journal_request::Repair::Drop(false)) | None => {
            return Err(to_status(Error::InvalidArgument(
                "say what to do: mark_done_output or drop".into(),
            )));
        }
    };
    let repair = JournalRepair {
        run,
        call_id: CallId::parse(&request.call_id).map_err(to_status)?,
        actor: request.actor,
        repair,
    };
    let (action, quarantined) = engine
        .repair_journal(&repair, SystemTime::now())
        .await
        .map_err(to_status)?;
    Ok(proto::RepairJournalResponse {
        action: Some(journal_action_to_wire(action)),
        quarantined_steps: quarantined.iter().map(|step| step.as_i64()).collect(),
    })
}
