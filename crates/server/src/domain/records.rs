//! The records that flow between the gRPC edge, the engine and the stores.

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::{
    CallId, Checksum, Digest32, EntryKind, InDoubt, MessageChain, RunId, RunKey, Step, ToolChain,
};

/// One entry of a run's message log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    pub content: Vec<u8>,
}

/// A validated Save request.
#[derive(Clone, Debug)]
pub struct NewCheckpoint {
    pub run: RunKey,
    pub step: Step,
    pub content_type: String,
    pub state: Vec<u8>,
    /// Only the messages appended since the previous checkpoint.
    pub messages: Vec<Message>,
    /// Position in the log where `messages` start.
    pub message_offset: u64,
    pub metadata: BTreeMap<String, String>,
    pub epoch: u64,
    pub client_checksum: Option<Checksum>,
}

/// What a successful Save returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedCheckpoint {
    pub id: String,
    pub checksum: Checksum,
    pub created_at: SystemTime,
    pub already_existed: bool,
    /// The tool results the checkpoint covers: the journal's length when it was written.
    pub tool_count: u64,
}

/// Why a checkpoint was quarantined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quarantine {
    pub reason: String,
}

/// A checkpoint as read back from a store, with the message history it covers.
#[derive(Clone, Debug)]
pub struct StoredCheckpoint {
    pub id: String,
    pub run_id: RunId,
    pub step: Step,
    pub epoch: u64,
    pub content_type: String,
    pub state: Vec<u8>,
    pub metadata: BTreeMap<String, String>,
    /// The log's first `message_count` messages, or fewer when rows are missing.
    pub messages: Vec<Message>,
    pub message_count: u64,
    pub tool_count: u64,
    pub checksum: Checksum,
    pub created_at: SystemTime,
    pub quarantine: Option<Quarantine>,
}

impl StoredCheckpoint {
    /// Recomputes checksum v1 from the content and compares it with the stored one.
    ///
    /// `tools` is the run's verified tool journal in journal order.
    pub fn verify(&self, tools: &[ToolRecord]) -> Result<(), String> {
        if self.messages.len() as u64 != self.message_count {
            return Err(format!(
                "message log holds {} of the {} messages the checkpoint covers",
                self.messages.len(),
                self.message_count
            ));
        }
        let covered = usize::try_from(self.tool_count).unwrap_or(usize::MAX);
        if tools.len() < covered {
            return Err(format!(
                "tool journal holds {} of the {} results the checkpoint covers",
                tools.len(),
                self.tool_count
            ));
        }
        let mut tool_chain = ToolChain::EMPTY;
        for record in &tools[..covered] {
            tool_chain.push_record(record);
        }
        let computed = super::checkpoint_checksum(
            &self.run_id,
            self.step,
            &self.content_type,
            &self.state,
            &self.metadata,
            &MessageChain::over(&self.messages),
            &tool_chain,
        );
        if computed != self.checksum {
            return Err(format!(
                "checksum mismatch: stored {}, computed {}",
                self.checksum, computed
            ));
        }
        Ok(())
    }
}

/// A validated RecordToolResult request.
#[derive(Clone, Debug)]
pub struct NewToolResult {
    pub run: RunKey,
    pub call_id: CallId,
    pub tool_name: String,
    pub step: Step,
    pub output: Vec<u8>,
    pub is_error: bool,
    pub epoch: u64,
}

/// One journal entry: a tool result, or (`kind`) a tool intent, whose `output` is empty and
/// `is_error` false.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolRecord {
    pub kind: EntryKind,
    pub call_id: CallId,
    pub tool_name: String,
    pub step: Step,
    pub output: Vec<u8>,
    pub is_error: bool,
    /// Position in the journal, from 1.
    pub seq: u64,
    pub recorded_at: SystemTime,
    /// The tool chain's head after this record, as stored.
    pub chain: Digest32,
}

/// Verifies a whole tool journal: every stored chain value must match the content.
pub fn verify_tool_journal(tools: &[ToolRecord]) -> Result<(), String> {
    let mut chain = ToolChain::EMPTY;
    for (index, record) in tools.iter().enumerate() {
        if record.seq != index as u64 + 1 {
            return Err(format!(
                "tool journal has a hole: entry {} carries seq {}",
                index + 1,
                record.seq
            ));
        }
        if chain.push_record(record) != record.chain {
            return Err(format!(
                "tool result {} (seq {}) does not match its digest",
                record.call_id, record.seq
            ));
        }
    }
    Ok(())
}

/// A checkpoint restored for LoadLatest or LoadAtStep.
#[derive(Clone, Debug)]
pub struct Restored {
    pub checkpoint: StoredCheckpoint,
    pub tool_results: Vec<ToolRecord>,
    /// Corrupt steps skipped on the way, newest first.
    pub skipped_steps: Vec<Step>,
}

/// The outcome of Resume.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// None when the run restarts from scratch.
    pub checkpoint: Option<StoredCheckpoint>,
    pub skipped_steps: Vec<Step>,
    /// The journal's sound entries, results and intents, in journal order.
    pub tool_results: Vec<ToolRecord>,
    pub epoch: u64,
    /// Intents without a result, and calls whose entry is corrupt.
    pub in_doubt: Vec<InDoubt>,
    /// Call ids of the corrupt journal entries.
    pub corrupt_call_ids: Vec<String>,
}

/// One line of ListCheckpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointSummary {
    pub step: Step,
    pub size_bytes: u64,
    pub quarantine: Option<Quarantine>,
    pub created_at: SystemTime,
    pub checksum: Checksum,
    pub epoch: u64,
    pub message_count: u64,
}

/// The outcome of verifying one checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub step: Step,
    pub valid: bool,
    pub reason: String,
    pub stored_checksum: Checksum,
    pub quarantined: bool,
}
