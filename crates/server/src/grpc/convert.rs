//! Conversions between the checkpoint RPCs' wire messages and domain records; the records the
//! cache shares live in [`crate::wire`].

use crate::domain::{CheckpointSummary, Step, StoredCheckpoint, ToolRecord, Verdict};
use crate::error::{Error, Result};
use crate::proto;
use crate::wire::{message_to_wire, timestamp, tool_to_wire};

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
        pinned_by: Vec::new(),
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
        .map_err(|_| Error::InvalidArgument(format!("invalid page_token {token:?}")))?;
    Step::parse(step).map(Some)
}
