//! Conversions between wire messages and domain records.

use std::time::SystemTime;

use crate::domain::{CheckpointSummary, Message, StoredCheckpoint, ToolRecord, Verdict};
use crate::proto;

pub fn timestamp(time: SystemTime) -> prost_types::Timestamp {
    prost_types::Timestamp::from(time)
}

pub fn message_to_wire(message: Message) -> proto::Message {
    proto::Message {
        role: message.role,
        content: message.content,
    }
}

pub fn message_from_wire(message: proto::Message) -> Message {
    Message {
        role: message.role,
        content: message.content,
    }
}

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
        epoch: checkpoint.epoch,
        checksum: checkpoint.checksum.to_hex(),
        created_at: Some(timestamp(checkpoint.created_at)),
        message_count: checkpoint.message_count,
        tool_count: checkpoint.tool_count,
    }
}

pub fn tool_to_wire(record: ToolRecord) -> proto::ToolResult {
    proto::ToolResult {
        call_id: record.call_id.as_str().to_owned(),
        tool_name: record.tool_name,
        step: record.step.as_i64(),
        output: record.output,
        is_error: record.is_error,
        seq: record.seq,
        recorded_at: Some(timestamp(record.recorded_at)),
    }
}

pub fn tools_to_wire(records: Vec<ToolRecord>) -> Vec<proto::ToolResult> {
    records.into_iter().map(tool_to_wire).collect()
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
        epoch: summary.epoch,
        message_count: summary.message_count,
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
