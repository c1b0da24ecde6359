//! Checksum v1: SHA-256 over the length-prefixed byte framing documented in checkpoint.proto,
//! over primitive inputs so that any Rust client computes what the server verifies.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

/// The domain tag that opens every checkpoint's framing.
const DOMAIN_TAG: &[u8] = b"checkpointd.checksum.v1";

/// A raw 32-byte SHA-256 value: a chain head or a checksum.
pub type Digest32 = [u8; 32];

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

    /// `lp(b)`: the length as a big-endian u64, then the bytes.
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
    pub fn push(&mut self, role: &str, content: &[u8]) -> Digest32 {
        let mut leaf = Framer::new();
        leaf.lp(role.as_bytes()).lp(content);
        self.head = chain(&self.head, &leaf.finish());
        self.len += 1;
        self.head
    }

    /// The chain over a whole log of `(role, content)` pairs, recomputed from content.
    pub fn over<'a>(messages: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Self {
        let mut chain = Self::EMPTY;
        for (role, content) in messages {
            chain.push(role, content);
        }
        chain
    }
}

/// One journalled tool result, as the tool chain frames it.
#[derive(Clone, Copy, Debug)]
pub struct ToolEntry<'a> {
    pub call_id: &'a str,
    pub tool_name: &'a str,
    pub step: u64,
    pub output: &'a [u8],
    pub is_error: bool,
}

/// One journalled tool intent, as the tool chain frames it.
#[derive(Clone, Copy, Debug)]
pub struct IntentEntry<'a> {
    pub call_id: &'a str,
    pub tool_name: &'a str,
    pub step: u64,
}

/// The byte that opens an intent leaf's preimage. A result leaf opens with the high byte of its
/// call id's big-endian length, which is 0 for any real length, so the two never collide.
const INTENT_LEAF_TAG: u8 = 0x01;

/// The running digest of a run's tool journal, in journal order (`ToolResult.seq`).
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
    pub fn push(&mut self, entry: ToolEntry<'_>) -> Digest32 {
        let mut leaf = Framer::new();
        leaf.lp(entry.call_id.as_bytes())
            .lp(entry.tool_name.as_bytes())
            .u64(entry.step)
            .lp(entry.output)
            .raw(&[u8::from(entry.is_error)]);
        self.head = chain(&self.head, &leaf.finish());
        self.len += 1;
        self.head
    }

    /// Appends one tool intent and returns the new head.
    pub fn push_intent(&mut self, entry: IntentEntry<'_>) -> Digest32 {
        let mut leaf = Framer::new();
        leaf.raw(&[INTENT_LEAF_TAG])
            .lp(entry.call_id.as_bytes())
            .lp(entry.tool_name.as_bytes())
            .u64(entry.step);
        self.head = chain(&self.head, &leaf.finish());
        self.len += 1;
        self.head
    }
}

/// The domain tag that opens every idempotency key's framing.
const IDEMPOTENCY_TAG: &[u8] = b"checkpointd.idempotency.v1";

/// Idempotency key v1 of a tool call, lower-case hex: what a side-effecting tool receives so
/// that a retry of the same call never repeats its effect.
pub fn idempotency_key(tenant: &str, run_id: &str, call_id: &str) -> String {
    let mut framer = Framer::new();
    framer
        .lp(IDEMPOTENCY_TAG)
        .lp(tenant.as_bytes())
        .lp(run_id.as_bytes())
        .lp(call_id.as_bytes());
    to_hex(&framer.finish())
}

/// The arguments digest of a tool call: lower-case hex SHA-256 of its arguments as the client
/// serialized them (`canonical` bytes; each client documents its serialization). Journalled
/// with the call, so that a replay is refused when the call being made has other arguments.
pub fn arguments_digest(canonical: &[u8]) -> String {
    use sha2::Digest as _;
    to_hex(&Sha256::digest(canonical).into())
}

/// What checksum v1 covers besides the two chains.
#[derive(Clone, Copy, Debug)]
pub struct CheckpointContent<'a> {
    pub run_id: &'a str,
    pub step: u64,
    pub content_type: &'a str,
    pub state: &'a [u8],
}

/// Checksum v1 of a checkpoint as 32 raw bytes; show it with [`to_hex`].
///
/// `messages` and `tools` are the chains as they stand once the checkpoint is saved: the whole
/// message log including the checkpoint's new messages, and the journal entries the checkpoint
/// covers (every one journalled, or the first `SaveRequest.tool_count`).
pub fn checkpoint_checksum(
    content: CheckpointContent<'_>,
    metadata: &BTreeMap<String, String>,
    messages: &MessageChain,
    tools: &ToolChain,
) -> Digest32 {
    let mut framer = Framer::new();
    framer
        .lp(DOMAIN_TAG)
        .lp(content.run_id.as_bytes())
        .u64(content.step)
        .lp(content.content_type.as_bytes())
        .lp(content.state)
        .u64(metadata.len() as u64);
    // A BTreeMap iterates in ascending byte order of its String keys, as the framing requires.
    for (key, value) in metadata {
        framer.lp(key.as_bytes()).lp(value.as_bytes());
    }
    framer
        .u64(messages.len)
        .raw(&messages.head)
        .u64(tools.len)
        .raw(&tools.head);
    framer.finish()
}

/// Lower-case hex, the form checksums take on the wire.
pub fn to_hex(digest: &Digest32) -> String {
    ::hex::encode(digest)
}
