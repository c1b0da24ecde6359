//! The tool journal's two kinds of entry (results and intents), idempotency keys, and the
//! diagnosis of a journal: which entries are corrupt and which calls are in doubt.

use crate::domain::ToolJournal;
use std::collections::HashSet;
use std::time::SystemTime;

use super::{ArgumentsDigest, CallId, Epoch, RunKey, Step, ToolChain, ToolRecord};

/// What a journal entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A tool call's result.
    Result,
    /// A side-effecting call about to run; its result completes it.
    Intent,
}

/// A validated RecordToolIntent request.
#[derive(Clone, Debug)]
pub struct NewToolIntent {
    pub run: RunKey,
    pub call_id: CallId,
    pub tool_name: String,
    pub step: Step,
    pub epoch: Epoch,
    /// The call's arguments digest; [`ArgumentsDigest::NONE`] when the client sent none.
    pub arguments_digest: ArgumentsDigest,
}

/// What RecordToolIntent answers: the call's intent and, once it completed, its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntentOutcome {
    /// `None` only when the call has a result journalled without an intent.
    pub intent: Option<ToolRecord>,
    pub result: Option<ToolRecord>,
    /// True when the call was known already and nothing changed.
    pub already_recorded: bool,
}

/// Idempotency key v1 of a call (see checkpoint.proto): what the tool receives.
pub fn idempotency_key(run: &RunKey, call_id: &str) -> String {
    checkpointd_protocol::checksum::idempotency_key(
        run.tenant.as_str(),
        run.run_id.as_str(),
        call_id,
    )
}

/// A call whose outcome is unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InDoubt {
    pub call_id: CallId,
    pub tool_name: String,
    pub step: Step,
    /// In doubt because its journal entry is corrupt, not because a result is missing.
    pub corrupt: bool,
}

/// A journal read apart: the entries that verify, the corrupt ones, and the calls in doubt.
#[derive(Clone, Debug, Default)]
pub struct JournalDiagnosis {
    /// The entries that match their digest, in journal order.
    pub sound: Vec<ToolRecord>,
    /// The entries that do not, in journal order.
    pub corrupt: Vec<ToolRecord>,
    pub in_doubt: Vec<InDoubt>,
}

impl JournalDiagnosis {
    /// Checks each entry against the stored chain value before it, so a damaged entry is found
    /// without condemning the entries after it (a damaged chain value condemns its neighbour
    /// too, which is right: neither can be trusted then).
    pub fn of(tools: &[ToolRecord]) -> Self {
        let mut diagnosis = Self::default();
        let mut previous = ToolChain::EMPTY;
        for (index, record) in tools.iter().enumerate() {
            let mut chain = previous;
            let sound = record.seq == index as u64 + 1 && chain.push_record(record) == record.chain;
            previous = ToolChain {
                len: index as u64 + 1,
                head: record.chain,
            };
            if sound {
                diagnosis.sound.push(record.clone());
            } else {
                diagnosis.corrupt.push(record.clone());
            }
        }
        let completed: HashSet<&str> = diagnosis
            .sound
            .iter()
            .filter(|record| record.kind == EntryKind::Result)
            .map(|record| record.call_id.as_str())
            .collect();
        // A call with any corrupt entry is in doubt as corrupt, whichever entry comes first.
        let corrupt_calls: HashSet<&str> = diagnosis
            .corrupt
            .iter()
            .map(|record| record.call_id.as_str())
            .collect();
        let mut seen = HashSet::new();
        for record in diagnosis.sound.iter().chain(&diagnosis.corrupt) {
            let corrupt = corrupt_calls.contains(record.call_id.as_str());
            let pending = record.kind == EntryKind::Intent || corrupt;
            if pending
                && !completed.contains(record.call_id.as_str())
                && seen.insert(record.call_id.as_str())
            {
                diagnosis.in_doubt.push(InDoubt {
                    call_id: record.call_id.clone(),
                    tool_name: record.tool_name.clone(),
                    step: record.step,
                    corrupt,
                });
            }
        }
        diagnosis.in_doubt.sort_by_key(|call| {
            tools
                .iter()
                .position(|record| record.call_id == call.call_id)
                .unwrap_or(usize::MAX)
        });
        diagnosis
    }

    /// The seq of the first corrupt entry: no checkpoint covering it can be restored.
    pub fn first_corrupt_seq(&self) -> Option<u64> {
        self.corrupt.first().map(|record| record.seq)
    }

    /// Call ids of the corrupt entries, each once, in journal order.
    pub fn corrupt_call_ids(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.corrupt
            .iter()
            .map(|record| record.call_id.as_str().to_owned())
            .filter(|call_id| seen.insert(call_id.clone()))
            .collect()
    }
}

/// One repair an operator made to a run's journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalAction {
    pub call_id: String,
    /// `mark_done` or `drop`.
    pub action: String,
    pub actor: String,
    pub acted_at: SystemTime,
    pub detail: String,
}

/// What an operator asks of one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repair {
    /// Journal this output as the call's result.
    MarkDone(Vec<u8>),
    /// Remove the call's corrupt entry.
    Drop,
}

/// A validated RepairJournal request.
#[derive(Clone, Debug)]
pub struct JournalRepair {
    pub run: RunKey,
    pub call_id: CallId,
    pub actor: String,
    pub repair: Repair,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(call_id: &str, kind: EntryKind, chain: &mut ToolChain) -> ToolRecord {
        let mut record = ToolRecord {
            kind,
            call_id: CallId::parse(call_id).unwrap(),
            tool_name: "send_email".to_owned(),
            step: Step::new(1),
            output: b"ok".to_vec(),
            is_error: false,
            seq: chain.len + 1,
            recorded_at: SystemTime::UNIX_EPOCH,
            chain: [0; 32],
            arguments_digest: Default::default(),
        };
        record.chain = chain.push_record(&record);
        record
    }

    fn in_doubt(journal: &[ToolRecord]) -> Vec<(String, bool)> {
        JournalDiagnosis::of(journal)
            .in_doubt
            .into_iter()
            .map(|call| (call.call_id.as_str().to_owned(), call.corrupt))
            .collect()
    }

    #[test]
    fn a_call_is_in_doubt_without_a_sound_result_and_corrupt_when_any_entry_is() {
        let mut chain = ToolChain::EMPTY;
        let mut journal = vec![
            entry("done", EntryKind::Intent, &mut chain),
            entry("done", EntryKind::Result, &mut chain),
            entry("pending", EntryKind::Intent, &mut chain),
            entry("damaged", EntryKind::Intent, &mut chain),
            entry("damaged", EntryKind::Result, &mut chain),
        ];
        assert_eq!(in_doubt(&journal), [("pending".to_owned(), false)]);
        journal[4].output = b"flipped".to_vec();
        assert_eq!(
            in_doubt(&journal),
            [("pending".to_owned(), false), ("damaged".to_owned(), true)]
        );
        let diagnosis = JournalDiagnosis::of(&journal);
        assert_eq!(diagnosis.first_corrupt_seq(), Some(5));
        assert_eq!(diagnosis.corrupt_call_ids(), ["damaged"]);
        assert_eq!(diagnosis.sound.len(), 4);
    }
}
