//! The records that flow between the gRPC edge, the engine and the stores.

use crate::domain::MessageLog;
use crate::domain::ToolJournal;
use std::collections::BTreeMap;
use std::time::SystemTime;

use super::{
    ArgumentsDigest, CallId, Checksum, Digest32, EntryKind, Epoch, InDoubt, MessageChain,
    MessageWindow, PassedOver, RunId, RunKey, Step, ToolChain, ToolWindow, WindowChains,
    covered_chain, covered_tools, verify_tool_window,
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
    pub epoch: Epoch,
    pub client_checksum: Option<Checksum>,
    /// How many journal entries the checkpoint covers (the first ones, by seq); `None`: the
    /// whole journal at the time of the save.
    pub tool_count: Option<u64>,
    /// The client's name for the checkpoint, unique within the run; not checksummed.
    pub label: Option<String>,
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
    /// When it was quarantined; `None` for checkpoints quarantined before the time was kept.
    pub quarantined_at: Option<SystemTime>,
}

impl Quarantine {
    /// A quarantine decided at `at`.
    pub fn new(reason: impl Into<String>, at: SystemTime) -> Self {
        Self {
            reason: reason.into(),
            quarantined_at: Some(at),
        }
    }
}

/// A checkpoint as read back from a store, with the message history it covers.
#[derive(Clone, Debug)]
pub struct StoredCheckpoint {
    pub id: String,
    pub run_id: RunId,
    pub step: Step,
    pub epoch: Epoch,
    pub content_type: String,
    pub state: Vec<u8>,
    pub metadata: BTreeMap<String, String>,
    /// The messages of the window read, `[messages_from, messages_end)` of the log, or fewer
    /// when rows are missing; the whole log `[0, message_count)` unless a window was asked for.
    pub messages: Vec<Message>,
    pub messages_from: u64,
    pub messages_end: u64,
    /// The chain digests stored around the window, which verify it without the rest.
    pub chains: WindowChains,
    pub message_count: u64,
    pub tool_count: u64,
    pub checksum: Checksum,
    pub created_at: SystemTime,
    pub quarantine: Option<Quarantine>,
    /// The client's name for the checkpoint, given on Save.
    pub label: Option<String>,
}

impl StoredCheckpoint {
    /// Recomputes checksum v1 from the content and compares it with the stored one; the
    /// messages count through their window (see [`covered_chain`]), the tool chain is
    /// recomputed over `tools`, the run's whole journal in journal order.
    pub fn verify(&self, tools: &[ToolRecord]) -> Result<(), String> {
        self.verify_with(&self.covered_messages()?, &self.recomputed_tools(tools)?)
    }

    /// [`Self::verify`] for a load: the tool results count through their window too (see
    /// [`covered_tools`]), so a load verifies what it returns. `tools` are the journal entries
    /// read from `tool_window.from` on, already verified link by link
    /// ([`verify_tool_window`]).
    pub fn verify_window(
        &self,
        tools: &[ToolRecord],
        tool_window: &ToolWindow,
    ) -> Result<(), String> {
        let covered = covered_tools(tools, self.tool_count, tool_window)?;
        self.verify_with(&self.covered_messages()?, &covered)
    }

    /// Checksum v1 over this checkpoint's content with `messages` and `tools` standing for its
    /// log and journal: the chains of its windows ([`Self::verify`]) or ones recomputed whole.
    pub fn verify_with(&self, messages: &MessageChain, tools: &ToolChain) -> Result<(), String> {
        let computed = super::checkpoint_checksum(
            &self.run_id,
            self.step,
            &self.content_type,
            &self.state,
            &self.metadata,
            messages,
            tools,
        );
        if computed != self.checksum {
            return Err(format!(
                "checksum mismatch: stored {}, computed {}",
                self.checksum, computed
            ));
        }
        Ok(())
    }

    /// The tool chain over the first `tool_count` entries of `tools` (the whole journal from
    /// seq 1), recomputed from content without trusting a stored digest: what Validate uses.
    pub fn recomputed_tools(&self, tools: &[ToolRecord]) -> Result<ToolChain, String> {
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
        Ok(tool_chain)
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
    pub epoch: Epoch,
    /// The call's arguments digest; [`ArgumentsDigest::NONE`] when the client sent none.
    pub arguments_digest: ArgumentsDigest,
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
    /// The call's arguments digest as journalled; not covered by the chain.
    pub arguments_digest: ArgumentsDigest,
}

/// Verifies a whole tool journal: every stored chain value must match the content.
pub fn verify_tool_journal(tools: &[ToolRecord]) -> Result<(), String> {
    verify_tool_window(tools, &ToolWindow::WHOLE)
}

/// Which journal entries a load returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JournalScope {
    /// Every entry of the run.
    #[default]
    All,
    /// Only the entries whose step is the loaded checkpoint's.
    Step,
    /// None.
    None,
}

/// How much of a restored checkpoint a caller wants back; what comes back is verified through
/// the chain digests stored around it (see [`covered_chain`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Leave out the messages before this log position (the caller holds them).
    pub message_offset: u64,
    pub journal: JournalScope,
    /// The most message bytes the answer carries; the rest is left for a continuation.
    pub max_message_bytes: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            message_offset: 0,
            journal: JournalScope::All,
            max_message_bytes: usize::MAX,
        }
    }
}

impl LoadOptions {
    /// The part of the message log these options read.
    pub fn window(&self) -> MessageWindow {
        MessageWindow::new(self.message_offset, self.max_message_bytes)
    }
}

impl StoredCheckpoint {
    /// Drops the messages before `offset` (clamped to the ones held); returns the position of
    /// the first message kept.
    fn skip_messages(&mut self, offset: u64) -> u64 {
        let skip = usize::try_from(offset.saturating_sub(self.messages_from))
            .unwrap_or(usize::MAX)
            .min(self.messages.len());
        self.messages.drain(..skip);
        self.messages_from += skip as u64;
        self.messages_from
    }
}

impl StoredCheckpoint {
    /// Cuts a checkpoint read whole and verified (a cache entry) to `window`, as a backend
    /// reading only the window would have, digests around it included: they are recomputed
    /// here, since the whole log is at hand, so a cut window hands out a continuation.
    pub fn restrict(&mut self, window: MessageWindow) {
        let sizes = self.messages.iter().map(|message| message.content.len());
        if window.offset == 0 && window.take(sizes) == self.messages.len() {
            // The window is the whole log (a cache hit's usual case): nothing to cut, and no
            // digest to recompute, which would hash the whole log a second time.
            return;
        }
        let mut chain = MessageChain::EMPTY;
        let heads: Vec<Digest32> = self
            .messages
            .iter()
            .map(|message| chain.push_message(message))
            .collect();
        let from = self.skip_messages(window.offset);
        let taken = window.take(self.messages.iter().map(|message| message.content.len()));
        let head_at = |end: u64| {
            end.checked_sub(1)
                .and_then(|i| heads.get(i as usize))
                .copied()
        };
        self.chains.before = head_at(from);
        if taken < self.messages.len() {
            self.messages.truncate(taken);
            self.messages_end = from + taken as u64;
            self.chains.after = head_at(self.messages_end);
            self.chains.head = heads.last().copied();
        }
    }

    /// The message chain the checksum covers, once the checkpoint is verified.
    pub fn covered_messages(&self) -> Result<MessageChain, String> {
        covered_chain(
            &self.messages,
            self.messages_from,
            self.messages_end,
            self.message_count,
            &self.chains,
        )
    }

    /// Whether messages past the window remain for a continuation.
    pub fn continues(&self) -> bool {
        self.messages_end < self.message_count
    }

    /// Whether the checkpoint holds its whole log, as a cache entry must.
    pub fn is_whole(&self) -> bool {
        self.messages_from == 0 && self.messages_end == self.message_count
    }
}

impl JournalScope {
    /// Keeps the entries of `journal` this scope asks for, once the journal is verified.
    pub fn select(self, journal: &mut Vec<ToolRecord>, step: Step) {
        match self {
            Self::All => {}
            Self::Step => journal.retain(|record| record.step == step),
            Self::None => journal.clear(),
        }
    }
}

/// A checkpoint restored for LoadLatest or LoadAtStep.
#[derive(Clone, Debug)]
pub struct Restored {
    /// Its messages start at `checkpoint.messages_from`, the offset asked for (clamped).
    pub checkpoint: StoredCheckpoint,
    pub tool_results: Vec<ToolRecord>,
    /// Corrupt steps skipped on the way, newest first.
    pub skipped_steps: Vec<Step>,
    /// Every quarantined checkpoint above the restored one, newest first: those found corrupt
    /// on this read and those quarantined before, until an operator repairs the run.
    pub passed_over: Vec<PassedOver>,
}

impl Restored {
    /// Trims a verified checkpoint's journal to what `options` ask for (the store read only
    /// the messages they ask for).
    pub fn trimmed(mut self, options: LoadOptions) -> Self {
        options
            .journal
            .select(&mut self.tool_results, self.checkpoint.step);
        self
    }
}

/// The outcome of Resume.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// None when the run restarts from scratch.
    pub checkpoint: Option<StoredCheckpoint>,
    pub skipped_steps: Vec<Step>,
    /// Every quarantined checkpoint above the restored one (all of them without one), newest
    /// first; `skipped_steps` are their steps.
    pub passed_over: Vec<PassedOver>,
    /// The journal's sound entries, results and intents, in journal order.
    pub tool_results: Vec<ToolRecord>,
    pub epoch: Epoch,
    /// Intents without a result, and calls whose entry is corrupt.
    pub in_doubt: Vec<InDoubt>,
    /// Call ids of the corrupt journal entries.
    pub corrupt_call_ids: Vec<String>,
}

/// One line of ListCheckpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointSummary {
    pub step: Step,
    /// The checkpoint's server-assigned id.
    pub id: String,
    pub size_bytes: u64,
    pub quarantine: Option<Quarantine>,
    pub created_at: SystemTime,
    pub checksum: Checksum,
    pub epoch: Epoch,
    pub message_count: u64,
    pub label: Option<String>,
    pub metadata: BTreeMap<String, String>,
}

/// Which checkpoints a listing returns, as a keyset page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListQuery {
    /// Only steps strictly above this one.
    pub above: Option<Step>,
    /// Only steps strictly below this one.
    pub below: Option<Step>,
    /// Highest step first.
    pub descending: bool,
    pub limit: usize,
    /// Only checkpoints whose metadata holds every entry, with exactly this value; empty
    /// admits all. The store filters while it pages, so a page is one query however rarely
    /// the filter matches.
    pub metadata: BTreeMap<String, String>,
}

impl ListQuery {
    /// Up to `limit` steps after `after`, ascending: the listing every maintenance job pages.
    pub fn ascending(after: Option<Step>, limit: usize) -> Self {
        Self {
            above: after,
            below: None,
            descending: false,
            limit,
            metadata: BTreeMap::new(),
        }
    }

    /// Whether a checkpoint with `metadata` passes the query's metadata filter.
    pub fn matches(&self, metadata: &BTreeMap<String, String>) -> bool {
        self.metadata
            .iter()
            .all(|(key, value)| metadata.get(key) == Some(value))
    }

    /// Whether `step` falls inside the query's bounds.
    pub fn admits(&self, step: Step) -> bool {
        self.above.is_none_or(|above| step > above) && self.below.is_none_or(|below| step < below)
    }
}

/// A run's head for GetRun and ListRuns: where it stands, without any payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInfo {
    pub run_id: RunId,
    /// The run's current fencing epoch.
    pub epoch: Epoch,
    /// The highest step with a checkpoint, quarantined or not.
    pub latest_step: Option<Step>,
    /// The highest step whose checkpoint is not quarantined.
    pub latest_valid_step: Option<Step>,
    /// The message log's length.
    pub message_count: u64,
    /// The tool journal's length.
    pub tool_count: u64,
    pub checkpoint_count: u64,
    pub updated_at: SystemTime,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::RunId;

    fn whole(texts: &[&str]) -> StoredCheckpoint {
        let messages: Vec<Message> = texts
            .iter()
            .map(|text| Message {
                role: "user".into(),
                content: text.as_bytes().to_vec(),
            })
            .collect();
        let count = messages.len() as u64;
        StoredCheckpoint {
            id: "id".into(),
            run_id: RunId::parse("r").unwrap(),
            step: Step::new(1),
            epoch: Epoch::new(1),
            content_type: "application/json".into(),
            state: b"{}".to_vec(),
            metadata: BTreeMap::new(),
            messages,
            messages_from: 0,
            messages_end: count,
            chains: WindowChains::default(),
            message_count: count,
            tool_count: 0,
            checksum: Checksum::from_bytes([0; 32]),
            created_at: SystemTime::UNIX_EPOCH,
            quarantine: None,
            label: None,
        }
    }

    #[test]
    fn restricting_to_a_window_covering_the_log_changes_nothing() {
        let mut checkpoint = whole(&["a", "bb", "ccc"]);
        checkpoint.restrict(MessageWindow::new(0, 100));
        assert_eq!(checkpoint.messages.len(), 3);
        assert_eq!(checkpoint.chains, WindowChains::default());
        assert!(checkpoint.is_whole());
    }

    #[test]
    fn a_cut_window_carries_the_digests_that_chain_it_into_the_whole_log() {
        let texts = ["a", "bb", "ccc", "dddd"];
        let expected = whole(&texts).covered_messages().unwrap();
        let mut checkpoint = whole(&texts);
        checkpoint.restrict(MessageWindow::new(1, 5));
        assert_eq!(
            (checkpoint.messages_from, checkpoint.messages_end),
            (1, 3),
            "messages 1 and 2 fit in 5 bytes"
        );
        assert!(checkpoint.continues());
        assert_eq!(checkpoint.covered_messages(), Ok(expected));
    }
}
