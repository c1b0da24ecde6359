//! Checksum v1 over the server's domain types. The framing itself lives in the protocol crate
//! (`checkpointd_protocol::checksum`), so clients compute exactly what the server verifies.

use std::collections::BTreeMap;
use std::fmt;

use checkpointd_protocol::checksum as v1;
pub use checkpointd_protocol::checksum::Digest32;

use super::{EntryKind, Message, RunId, Step, ToolRecord};
use crate::error::Error;

/// Checksum v1 of a checkpoint, shown as lower-case hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Checksum(Digest32);

impl Checksum {
    pub fn from_bytes(bytes: Digest32) -> Self {
        Self(bytes)
    }

    pub fn as_bytes(&self) -> &Digest32 {
        &self.0
    }

    /// Parses 64 lower- or upper-case hex characters.
    /// Parses the lower-case hex the proto specifies; upper-case digits are refused, so every
    /// client writes checksums the one way the server prints them.
    pub fn parse_hex(raw: &str) -> Result<Self, Error> {
        let refuse = || {
            Error::invalid(
                "checksum",
                format!(
                    "checksum must be 64 lower-case hex characters (SHA-256), got {:?}",
                    truncate_for_message(raw)
                ),
            )
        };
        if raw.bytes().any(|byte| byte.is_ascii_uppercase()) {
            return Err(refuse());
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(raw, &mut out).map_err(|_| refuse())?;
        Ok(Self(out))
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Checksum({})", self.to_hex())
    }
}

fn truncate_for_message(raw: &str) -> String {
    raw.chars().take(80).collect()
}

/// The running digests of a run's message log and tool journal are checksum v1's own types,
/// used as they are (no copy to convert into and back on every push); [`MessageLog`] and
/// [`ToolJournal`] push domain values onto them.
pub use checkpointd_protocol::checksum::{MessageChain, ToolChain};

/// Pushes domain messages onto a [`MessageChain`].
pub trait MessageLog {
    /// Appends one message and returns the new head, which stores alongside the message.
    fn push_message(&mut self, message: &Message) -> Digest32;

    /// The chain over a whole log, recomputed from content.
    fn over_messages<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Self;
}

impl MessageLog for MessageChain {
    fn push_message(&mut self, message: &Message) -> Digest32 {
        self.push(&message.role, &message.content)
    }

    fn over_messages<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Self {
        let mut chain = Self::EMPTY;
        for message in messages {
            chain.push_message(message);
        }
        chain
    }
}

/// Pushes domain journal entries onto a [`ToolChain`].
pub trait ToolJournal {
    /// Appends one tool result and returns the new head.
    fn push_result(
        &mut self,
        call_id: &str,
        tool_name: &str,
        step: Step,
        output: &[u8],
        is_error: bool,
    ) -> Digest32;

    /// Appends one tool intent and returns the new head.
    fn push_tool_intent(&mut self, call_id: &str, tool_name: &str, step: Step) -> Digest32;

    /// Appends one journal entry, result or intent, as checksum v1 frames its kind.
    fn push_record(&mut self, record: &ToolRecord) -> Digest32;
}

impl ToolJournal for ToolChain {
    fn push_result(
        &mut self,
        call_id: &str,
        tool_name: &str,
        step: Step,
        output: &[u8],
        is_error: bool,
    ) -> Digest32 {
        self.push(v1::ToolEntry {
            call_id,
            tool_name,
            step: step.get(),
            output,
            is_error,
        })
    }

    fn push_tool_intent(&mut self, call_id: &str, tool_name: &str, step: Step) -> Digest32 {
        self.push_intent(v1::IntentEntry {
            call_id,
            tool_name,
            step: step.get(),
        })
    }

    fn push_record(&mut self, record: &ToolRecord) -> Digest32 {
        match record.kind {
            EntryKind::Result => self.push_result(
                record.call_id.as_str(),
                &record.tool_name,
                record.step,
                &record.output,
                record.is_error,
            ),
            EntryKind::Intent => {
                self.push_tool_intent(record.call_id.as_str(), &record.tool_name, record.step)
            }
        }
    }
}

/// Checksum v1 of a checkpoint, given the heads of its message and tool chains.
pub fn checkpoint_checksum(
    run_id: &RunId,
    step: Step,
    content_type: &str,
    state: &[u8],
    metadata: &BTreeMap<String, String>,
    messages: &MessageChain,
    tools: &ToolChain,
) -> Checksum {
    Checksum(v1::checkpoint_checksum(
        v1::CheckpointContent {
            run_id: run_id.as_str(),
            step: step.get(),
            content_type,
            state,
        },
        metadata,
        messages,
        tools,
    ))
}
