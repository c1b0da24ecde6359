//! Checksum v1: SHA-256 over a length-prefixed byte framing, documented in checkpoint.proto.

use std::collections::BTreeMap;
use std::fmt;

use sha2::{Digest, Sha256};

use super::{Message, RunId, Step, ToolRecord};
use crate::error::Error;

const DOMAIN_TAG: &[u8] = b"checkpointd.checksum.v1";

/// A raw 32-byte SHA-256 value: a chain head or a checksum.
pub type Digest32 = [u8; 32];

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
    pub fn parse_hex(raw: &str) -> Result<Self, Error> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(raw, &mut out).map_err(|_| {
            Error::InvalidArgument(format!(
                "checksum must be 64 hex characters (SHA-256), got {:?}",
                truncate_for_message(raw)
            ))
        })?;
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

/// Writes the v1 framing into a hasher.
struct Framer(Sha256);

impl Framer {
    fn new() -> Self {
        Self(Sha256::new())
    }

    fn u64(&mut self, value: u64) -> &mut Self {
        self.0.update(value.to_be_bytes());
        self
    }

    fn lp(&mut self, bytes: &[u8]) -> &mut Self {
        self.u64(bytes.len() as u64);
        self.0.update(bytes);
        self
    }

    fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(bytes);
        self
    }

    fn finish(self) -> Digest32 {
        self.0.finalize().into()
    }
}

fn chain(previous: &Digest32, leaf: &Digest32) -> Digest32 {
    let mut framer = Framer::new();
    framer.raw(previous).raw(leaf);
    framer.finish()
}

/// The running digest of a run's message log: `d_i = H(d_(i-1) || H(lp(role) || lp(content)))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageChain {
    pub len: u64,
    pub head: Digest32,
}

impl MessageChain {
    pub const EMPTY: Self = Self {
        len: 0,
        head: [0; 32],
    };

    /// Appends one message and returns the new head, which stores alongside the message.
    pub fn push(&mut self, message: &Message) -> Digest32 {
        let mut leaf = Framer::new();
        leaf.lp(message.role.as_bytes()).lp(&message.content);
        self.head = chain(&self.head, &leaf.finish());
        self.len += 1;
        self.head
    }

    /// The chain over a whole log, recomputed from content.
    pub fn over<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Self {
        let mut chain = Self::EMPTY;
        for message in messages {
            chain.push(message);
        }
        chain
    }
}

/// The running digest of a run's tool journal, in journal order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolChain {
    pub len: u64,
    pub head: Digest32,
}

impl ToolChain {
    pub const EMPTY: Self = Self {
        len: 0,
        head: [0; 32],
    };

    /// Appends one tool result and returns the new head.
    pub fn push(
        &mut self,
        call_id: &str,
        tool_name: &str,
        step: Step,
        output: &[u8],
        is_error: bool,
    ) -> Digest32 {
        let mut leaf = Framer::new();
        leaf.lp(call_id.as_bytes())
            .lp(tool_name.as_bytes())
            .u64(step.get())
            .lp(output)
            .raw(&[u8::from(is_error)]);
        self.head = chain(&self.head, &leaf.finish());
        self.len += 1;
        self.head
    }

    pub fn push_record(&mut self, record: &ToolRecord) -> Digest32 {
        self.push(
            record.call_id.as_str(),
            &record.tool_name,
            record.step,
            &record.output,
            record.is_error,
        )
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
    let mut framer = Framer::new();
    framer
        .lp(DOMAIN_TAG)
        .lp(run_id.as_str().as_bytes())
        .u64(step.get())
        .lp(content_type.as_bytes())
        .lp(state)
        .u64(metadata.len() as u64);
    // BTreeMap iterates in ascending byte order of its String keys.
    for (key, value) in metadata {
        framer.lp(key.as_bytes()).lp(value.as_bytes());
    }
    framer
        .u64(messages.len)
        .raw(&messages.head)
        .u64(tools.len)
        .raw(&tools.head);
    Checksum(framer.finish())
}
