//! The rules of Save and RecordToolResult as pure functions, shared by every backend.
//!
//! A backend reads a context inside its write transaction, asks the planner what to do, and
//! applies the answer. Keeping the decisions here means idempotency, conflicts, fencing and
//! message offsets behave the same on every store.

use crate::domain::MessageLog;
use crate::domain::ToolJournal;
use std::time::SystemTime;

use crate::domain::{
    ArgumentsDigest, CallId, Checksum, Digest32, EntryKind, Epoch, IntentOutcome, Message,
    MessageChain, NewCheckpoint, NewToolIntent, NewToolResult, SavedCheckpoint, Step, ToolChain,
    ToolRecord, checkpoint_checksum,
};
use crate::error::{Error, Result};

/// The run's write-side state, kept on the run row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunHead {
    pub epoch: Epoch,
    pub messages: MessageChain,
    pub tools: ToolChain,
}

impl RunHead {
    /// The head of a run that does not exist yet.
    pub const NEW: Self = Self {
        epoch: Epoch::NEVER_RESUMED,
        messages: MessageChain::EMPTY,
        tools: ToolChain::EMPTY,
    };
}

/// A checkpoint already stored at the step a Save targets.
#[derive(Clone, Debug)]
pub struct ExistingCheckpoint {
    pub id: String,
    pub epoch: Epoch,
    pub checksum: Checksum,
    pub created_at: SystemTime,
    /// A quarantined checkpoint is never restored, so the run's owner may overwrite it.
    pub quarantined: bool,
    pub label: Option<String>,
}

/// What a backend reads before planning a Save.
#[derive(Clone, Debug)]
pub struct SaveContext {
    pub head: RunHead,
    pub existing: Option<ExistingCheckpoint>,
    /// The highest step that has a checkpoint not quarantined.
    pub latest_step: Option<Step>,
    /// The message chain's value after `message_offset` messages: `head.messages.head` when
    /// the offset equals the log's length, the stored chain value of message `offset - 1` when
    /// it is shorter (zeros for offset 0), `None` when the offset is past the end.
    pub prefix: Option<Digest32>,
    /// The step of the checkpoint that already carries the Save's label, if any.
    pub label_step: Option<Step>,
    /// The tool chain the checkpoint covers: `head.tools` when the Save names no `tool_count`
    /// or the journal's length, the stored chain value of entry `tool_count` when it is shorter
    /// (zeros for 0), `None` when it is past the end. See [`SaveContext::tools_source`].
    pub tools: Option<ToolChain>,
}

impl SaveContext {
    /// Which stored message chain value the backend must read for `prefix`, if any:
    /// `Some(seq)` means "the chain stored with message `seq` (0-based)".
    pub fn prefix_source(head: &RunHead, offset: u64) -> PrefixSource {
        if offset == head.messages.len {
            PrefixSource::Head
        } else if offset > head.messages.len {
            PrefixSource::Gap
        } else if offset == 0 {
            PrefixSource::Empty
        } else {
            PrefixSource::StoredAt(offset - 1)
        }
    }
}

impl SaveContext {
    /// Which stored tool chain value the backend must read for `tools`, if any:
    /// `StoredAt(seq)` means "the chain stored with journal entry `seq` (1-based)".
    pub fn tools_source(head: &RunHead, tool_count: Option<u64>) -> ToolSource {
        match tool_count {
            None => ToolSource::Head,
            Some(count) if count == head.tools.len => ToolSource::Head,
            Some(count) if count > head.tools.len => ToolSource::Past,
            Some(0) => ToolSource::Empty,
            Some(count) => ToolSource::StoredAt(count),
        }
    }

    /// The `tools` a Save covers, given what the backend reads for it: `stored_at(seq)` is the
    /// chain value stored with journal entry `seq`, asked for only when the Save covers fewer
    /// entries than the journal holds.
    pub fn covered_tools(
        head: &RunHead,
        tool_count: Option<u64>,
        stored_at: impl FnOnce(u64) -> Result<Option<Digest32>>,
    ) -> Result<Option<ToolChain>> {
        let source = Self::tools_source(head, tool_count);
        let stored = match source {
            ToolSource::StoredAt(seq) => stored_at(seq)?,
            _ => None,
        };
        Ok(source.chain(head, stored))
    }
}

/// Where the tool chain a Save covers comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolSource {
    Head,
    Empty,
    Past,
    StoredAt(u64),
}

impl ToolSource {
    /// The covered chain, given the run's head and the stored chain value at `StoredAt`'s seq
    /// (`None` when no row holds it, which reads as past the end).
    pub fn chain(self, head: &RunHead, stored: Option<Digest32>) -> Option<ToolChain> {
        match self {
            Self::Head => Some(head.tools),
            Self::Empty => Some(ToolChain::EMPTY),
            Self::Past => None,
            Self::StoredAt(len) => stored.map(|head| ToolChain { len, head }),
        }
    }
}

/// Where the message chain value at a Save's offset comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefixSource {
    Head,
    Empty,
    Gap,
    StoredAt(u64),
}

/// A new message row: its 0-based position, content and chain value.
#[derive(Clone, Debug)]
pub struct MessageRow {
    pub seq: u64,
    pub message: Message,
    pub chain: Digest32,
}

/// What a backend must do for a Save.
#[derive(Clone, Debug)]
pub enum SavePlan {
    /// An identical checkpoint exists: change nothing and answer with it.
    Unchanged(SavedCheckpoint),
    /// Write the checkpoint (replacing the one at its step when `replace`), append the message
    /// rows, and set the run's head.
    Write {
        id: String,
        checksum: Checksum,
        replace: bool,
        rows: Vec<MessageRow>,
        head: RunHead,
        message_count: u64,
        tool_count: u64,
    },
}

/// Decides what a Save does. See the `Save` RPC's contract in checkpoint.proto.
pub fn plan_save(request: &NewCheckpoint, context: &SaveContext) -> Result<SavePlan> {
    let head = &context.head;
    request.epoch.check_write(head.epoch)?;
    let Some(prefix) = context.prefix else {
        // Past the end, the client saw messages the store no longer has: its predecessor Save
        // was lost (a failover, a restore), so it must resync, not fix its request.
        return Err(Error::MessageLogBehind(format!(
            "message_offset {} is past the stored message log, which holds {} messages: \
             messages saved before are missing; Resume the run and continue from what it restores",
            request.message_offset, head.messages.len
        )));
    };
    let Some(tools) = context.tools else {
        // Past the end, the client saw journal entries the store does not hold: as for the
        // message log, it must resync, not fix its request.
        return Err(Error::JournalBehind(format!(
            "tool_count {} is past the stored tool journal, which holds {} entries: entries the \
             client saw are missing; Resume the run and continue from what it restores",
            request.tool_count.unwrap_or_default(),
            head.tools.len
        )));
    };
    let mut chain = MessageChain {
        len: request.message_offset,
        head: prefix,
    };
    let rows: Vec<MessageRow> = request
        .messages
        .iter()
        .map(|message| {
            let seq = chain.len;
            let value = chain.push_message(message);
            MessageRow {
                seq,
                message: message.clone(),
                chain: value,
            }
        })
        .collect();
    let checksum = checkpoint_checksum(
        &request.run.run_id,
        request.step,
        &request.content_type,
        &request.state,
        &request.metadata,
        &chain,
        &tools,
    );
    if let Some(client) = request.client_checksum
        && client != checksum
    {
        return Err(Error::ChecksumMismatch(format!(
            "checksum mismatch: the request carries {client}, the content hashes to {checksum}"
        )));
    }

    if let Some(taken) = context.label_step.filter(|taken| *taken != request.step) {
        return Err(Error::LabelTaken(format!(
            "label {:?} already names the checkpoint at step {taken} of run {}",
            request.label.as_deref().unwrap_or_default(),
            request.run.run_id
        )));
    }
    let replace = match &context.existing {
        // Even identical content must be rewritten: the stored copy is the corrupt one.
        Some(existing) if existing.quarantined => true,
        // The label is not checksummed, so a retry is identical only if it names it alike.
        Some(existing) if existing.checksum == checksum && existing.label == request.label => {
            return Ok(SavePlan::Unchanged(SavedCheckpoint {
                id: existing.id.clone(),
                checksum,
                created_at: existing.created_at,
                already_existed: true,
                // Same checksum, so the same tool chain: the one this request covers.
                tool_count: tools.len,
            }));
        }
        Some(existing) if request.epoch > existing.epoch => true,
        Some(_) => {
            return Err(Error::StepConflict(format!(
                "step {} of run {} already holds a different checkpoint",
                request.step, request.run.run_id
            )));
        }
        None => false,
    };
    if !replace && let Some(latest) = context.latest_step.filter(|latest| *latest >= request.step) {
        return Err(Error::StepBehindLatest(format!(
            "step {} is not after the run's latest checkpoint at step {latest}",
            request.step
        )));
    }
    if request.message_offset != head.messages.len {
        return Err(Error::invalid(
            "message_offset",
            format!(
                "message_offset {} does not match the message log's length {}; \
             send the messages added since the previous checkpoint, starting there",
                request.message_offset, head.messages.len
            ),
        ));
    }
    Ok(SavePlan::Write {
        id: new_id(),
        checksum,
        replace,
        rows,
        head: RunHead {
            epoch: head.epoch,
            messages: chain,
            tools: head.tools,
        },
        message_count: chain.len,
        // The run's journal stays as it is; the checkpoint covers its first `tools.len`.
        tool_count: tools.len,
    })
}

/// What a backend must do for a RecordToolResult.
#[derive(Clone, Debug)]
pub enum ToolPlan {
    /// The call id is journalled already: answer with the stored record.
    Existing(ToolRecord),
    /// Insert this record and set the run's tool chain head.
    Insert(ToolRecord, ToolChain),
}

/// What the journal holds for one call id: its result and its intent, each if journalled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredCall {
    pub result: Option<ToolRecord>,
    pub intent: Option<ToolRecord>,
}

impl StoredCall {
    /// A call with only a result journalled (or none, for `None`).
    pub fn result(result: Option<ToolRecord>) -> Self {
        Self {
            result,
            intent: None,
        }
    }

    /// Splits a call's entries, read in any order, by kind.
    pub fn of(entries: impl IntoIterator<Item = ToolRecord>) -> Self {
        let mut call = Self::default();
        for entry in entries {
            match entry.kind {
                EntryKind::Result => call.result = Some(entry),
                EntryKind::Intent => call.intent = Some(entry),
            }
        }
        call
    }
}

/// Refuses a call whose arguments digest differs from one its call id is journalled with:
/// a replay must match its call (DESIGN contract 14). Empty digests match anything.
pub fn check_arguments<'a>(
    call_id: &CallId,
    request: &ArgumentsDigest,
    stored: impl IntoIterator<Item = &'a ToolRecord>,
) -> Result<()> {
    for stored in stored {
        if request.conflicts_with(&stored.arguments_digest) {
            return Err(Error::ArgumentsMismatch {
                call_id: call_id.as_str().to_owned(),
                stored_digest: stored.arguments_digest.to_string(),
                request_digest: request.to_string(),
            });
        }
    }
    Ok(())
}

/// Decides what a RecordToolResult does, given the run's head and what its call id holds.
///
/// A call whose result or intent is journalled with another arguments digest is refused
/// (`ArgumentsMismatch`); otherwise a known result is the answer.
pub fn plan_tool_result(
    request: &NewToolResult,
    head: &RunHead,
    stored: StoredCall,
) -> Result<ToolPlan> {
    request.epoch.check_write(head.epoch)?;
    check_arguments(
        &request.call_id,
        &request.arguments_digest,
        stored.result.iter().chain(&stored.intent),
    )?;
    if let Some(existing) = stored.result {
        return Ok(ToolPlan::Existing(existing));
    }
    let mut tools = head.tools;
    let chain = tools.push_result(
        request.call_id.as_str(),
        &request.tool_name,
        request.step,
        &request.output,
        request.is_error,
    );
    let record = ToolRecord {
        kind: EntryKind::Result,
        call_id: request.call_id.clone(),
        tool_name: request.tool_name.clone(),
        step: request.step,
        output: request.output.clone(),
        is_error: request.is_error,
        seq: tools.len,
        recorded_at: SystemTime::now(),
        chain,
        arguments_digest: request.arguments_digest.clone(),
    };
    Ok(ToolPlan::Insert(record, tools))
}

/// What a backend must do for a RecordToolResults batch.
#[derive(Clone, Debug, Default)]
pub struct BatchPlan {
    /// One answer per request, in order: the record and whether it was journalled already.
    pub answers: Vec<(ToolRecord, bool)>,
    /// The records to insert, in journal order; empty when every call id is known.
    pub inserts: Vec<ToolRecord>,
    /// The run's tool chain head once the inserts are applied; `None` when nothing is inserted.
    pub tools: Option<ToolChain>,
}

impl BatchPlan {
    /// Rounds every record's `recorded_at` as the backend's column does, so that the answers
    /// equal what a retry reads back. Stored records are rounded already, and rounding twice
    /// changes nothing.
    pub fn round_times(&mut self, round: impl Fn(SystemTime) -> SystemTime) {
        let records = self.answers.iter_mut().map(|(record, _)| record);
        for record in records.chain(self.inserts.iter_mut()) {
            record.recorded_at = round(record.recorded_at);
        }
    }
}

/// Decides what a RecordToolResults batch does: each request as [`plan_tool_result`] would, in
/// order, each planned on the chain the ones before it left. `existing[i]` is what the journal
/// holds for `requests[i]`'s call id. Fenced once (every request of a batch carries its epoch);
/// a call id repeated within the batch is journalled from its first entry and the later one
/// answers with that record, as a retry would. One refused entry refuses the whole batch.
pub fn plan_tool_results(
    requests: &[NewToolResult],
    head: &RunHead,
    existing: Vec<StoredCall>,
) -> Result<BatchPlan> {
    if let Some(first) = requests.first() {
        first.epoch.check_write(head.epoch)?;
    }
    let mut plan = BatchPlan::default();
    let mut current = *head;
    for (request, stored) in requests.iter().zip(existing) {
        let mut stored = stored;
        if stored.result.is_none() {
            stored.result = plan
                .inserts
                .iter()
                .find(|record| record.call_id == request.call_id)
                .cloned();
        }
        match plan_tool_result(request, &current, stored)? {
            ToolPlan::Existing(record) => plan.answers.push((record, true)),
            ToolPlan::Insert(record, tools) => {
                current.tools = tools;
                plan.tools = Some(tools);
                plan.answers.push((record.clone(), false));
                plan.inserts.push(record);
            }
        }
    }
    Ok(plan)
}

/// What a backend must do for a RecordToolIntent.
#[derive(Clone, Debug)]
pub enum IntentPlan {
    /// The call is known already (an intent, a result, or both): answer with what is stored.
    Existing(IntentOutcome),
    /// Insert this intent and set the run's tool chain head.
    Insert(ToolRecord, ToolChain),
}

/// Decides what a RecordToolIntent does, given the run's head and the call's stored entries.
///
/// Fenced like a result. A call that already has a result never gets an intent after it: the
/// call is done, and the answer says so.
pub fn plan_tool_intent(
    request: &NewToolIntent,
    head: &RunHead,
    existing_intent: Option<ToolRecord>,
    existing_result: Option<ToolRecord>,
) -> Result<IntentPlan> {
    request.epoch.check_write(head.epoch)?;
    check_arguments(
        &request.call_id,
        &request.arguments_digest,
        existing_intent.iter().chain(&existing_result),
    )?;
    if existing_intent.is_some() || existing_result.is_some() {
        return Ok(IntentPlan::Existing(IntentOutcome {
            intent: existing_intent,
            result: existing_result,
            already_recorded: true,
        }));
    }
    let mut tools = head.tools;
    let chain = tools.push_tool_intent(request.call_id.as_str(), &request.tool_name, request.step);
    let record = ToolRecord {
        kind: EntryKind::Intent,
        call_id: request.call_id.clone(),
        tool_name: request.tool_name.clone(),
        step: request.step,
        output: Vec::new(),
        is_error: false,
        seq: tools.len,
        recorded_at: SystemTime::now(),
        chain,
        arguments_digest: request.arguments_digest.clone(),
    };
    Ok(IntentPlan::Insert(record, tools))
}

/// A journal repair applies only to the journal it was planned from.
pub fn check_journal_unchanged(expected: &ToolChain, current: &ToolChain) -> Result<()> {
    if expected != current {
        return Err(Error::JournalState(format!(
            "the tool journal changed since it was read ({} entries then, {} now); \
             read it again and repeat the repair",
            expected.len, current.len
        )));
    }
    Ok(())
}

/// A fresh, time-ordered checkpoint id.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

mod repair;
#[cfg(test)]
mod tests;

pub use repair::{JournalRewrite, plan_repair};
