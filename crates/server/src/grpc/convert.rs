//! Conversions between the checkpoint RPCs' wire messages and domain records; the records the
//! cache shares live in [`crate::wire`].

use crate::proto;
use crate::wire::{message_to_wire, timestamp, tool_to_wire};
use checkpointd_core::domain::{
    CheckpointSummary, EntryKind, InDoubt, JournalAction, PassedOver, RunKey, Step,
    StoredCheckpoint, ToolRecord, Verdict, idempotency_key,
};
use checkpointd_core::error::{Error, Result};

/// `checkpoint` as sent, its messages from log position `messages_from`.
pub fn checkpoint_to_wire(checkpoint: StoredCheckpoint) -> proto::Checkpoint {
    proto::Checkpoint {
        checkpoint_id: checkpoint.id,
        run_id: checkpoint.run_id.as_str().to_owned(),
        step: checkpoint.step.as_i64(),
        content_type: checkpoint.content_type,
        state: checkpoint.state,
        messages: checkpoint
            .messages
            .into_iter()
            .map(message_to_wire)
            .collect(),
        metadata: checkpoint.metadata.into_iter().collect(),
        epoch: checkpoint.epoch.get(),
        checksum: checkpoint.checksum.to_hex(),
        created_at: Some(timestamp(checkpoint.created_at)),
        message_count: checkpoint.message_count,
        tool_count: checkpoint.tool_count,
        messages_offset: checkpoint.messages_from,
        label: checkpoint.label.unwrap_or_default(),
    }
}

/// The quarantined checkpoints an answer passed over, in their order (newest first).
pub fn passed_over_to_wire(passed_over: Vec<PassedOver>) -> Vec<proto::PassedOverCheckpoint> {
    passed_over
        .into_iter()
        .map(|checkpoint| proto::PassedOverCheckpoint {
            step: checkpoint.step.as_i64(),
            checkpoint_id: checkpoint.checkpoint_id,
            label: checkpoint.label.unwrap_or_default(),
            metadata: checkpoint.metadata.into_iter().collect(),
            quarantined_at: checkpoint.quarantined_at.map(timestamp),
            reason: checkpoint.reason,
        })
        .collect()
}

/// A journal split by kind: its results and its intents, each in journal order.
pub fn journal_to_wire(
    run: &RunKey,
    records: Vec<ToolRecord>,
) -> (Vec<proto::ToolResult>, Vec<proto::ToolIntent>) {
    let (intents, results): (Vec<_>, Vec<_>) = records
        .into_iter()
        .partition(|record| record.kind == EntryKind::Intent);
    (
        results.into_iter().map(tool_to_wire).collect(),
        intents
            .into_iter()
            .map(|record| intent_to_wire(run, record))
            .collect(),
    )
}

pub fn intent_to_wire(run: &RunKey, record: ToolRecord) -> proto::ToolIntent {
    proto::ToolIntent {
        idempotency_key: idempotency_key(run, record.call_id.as_str()),
        call_id: record.call_id.as_str().to_owned(),
        tool_name: record.tool_name,
        step: record.step.as_i64(),
        seq: record.seq,
        recorded_at: Some(timestamp(record.recorded_at)),
        arguments_digest: record.arguments_digest.to_string(),
    }
}

pub fn in_doubt_to_wire(run: &RunKey, call: InDoubt) -> proto::InDoubtCall {
    proto::InDoubtCall {
        idempotency_key: idempotency_key(run, call.call_id.as_str()),
        call_id: call.call_id.as_str().to_owned(),
        tool_name: call.tool_name,
        step: call.step.as_i64(),
        corrupt: call.corrupt,
    }
}

pub fn journal_entry_to_wire(record: ToolRecord, corrupt: bool) -> proto::JournalEntry {
    let kind = match record.kind {
        EntryKind::Result => proto::JournalEntryKind::Result,
        EntryKind::Intent => proto::JournalEntryKind::Intent,
    };
    proto::JournalEntry {
        seq: record.seq,
        kind: kind as i32,
        call_id: record.call_id.as_str().to_owned(),
        tool_name: record.tool_name,
        step: record.step.as_i64(),
        output: record.output,
        is_error: record.is_error,
        recorded_at: Some(timestamp(record.recorded_at)),
        corrupt,
    }
}

pub fn journal_action_to_wire(action: JournalAction) -> proto::JournalAction {
    proto::JournalAction {
        call_id: action.call_id,
        action: action.action,
        actor: action.actor,
        acted_at: Some(timestamp(action.acted_at)),
        detail: action.detail,
    }
}

pub fn summary_to_wire(summary: CheckpointSummary) -> proto::CheckpointSummary {
    proto::CheckpointSummary {
        step: summary.step.as_i64(),
        size_bytes: summary.size_bytes,
        valid: summary.quarantine.is_none(),
        quarantine_reason: summary
            .quarantine
            .map(|quarantine| quarantine.reason)
            .unwrap_or_default(),
        created_at: Some(timestamp(summary.created_at)),
        checksum: summary.checksum.to_hex(),
        epoch: summary.epoch.get(),
        message_count: summary.message_count,
        pinned_by: Vec::new(),
        label: summary.label.unwrap_or_default(),
        metadata: summary.metadata.into_iter().collect(),
    }
}

pub fn verdict_to_wire(verdict: Verdict) -> proto::CheckpointVerdict {
    proto::CheckpointVerdict {
        step: verdict.step.as_i64(),
        valid: verdict.valid,
        reason: verdict.reason,
        stored_checksum: verdict.stored_checksum.to_hex(),
        quarantined: verdict.quarantined,
    }
}

/// A ListCheckpoints `page_token`: the last step of the previous page; empty for the first.
pub fn step_after_page_token(token: &str) -> Result<Option<Step>> {
    if token.is_empty() {
        return Ok(None);
    }
    let step = token
        .parse::<i64>()
        .map_err(|_| Error::invalid("page_token", format!("invalid page_token {token:?}")))?;
    Step::parse(step).map(Some)
}
