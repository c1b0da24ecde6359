//! The rules of an operator's journal repair as a pure function: what a repair rewrites, which
//! checkpoints it invalidates, and what it refuses.

use crate::domain::ToolJournal;
use std::collections::HashMap;
use std::time::SystemTime;

use crate::domain::{
    EntryKind, JournalAction, JournalDiagnosis, JournalRepair, Repair, RunKey, Step, ToolChain,
    ToolRecord,
};
use crate::error::{Error, Result};

#[cfg(test)]
mod tests;

/// A rewrite of a run's journal from one seq on, which a backend applies in one transaction.
#[derive(Clone, Debug)]
pub struct JournalRewrite {
    pub run: RunKey,
    /// The run's tool chain the plan was made from: the rewrite applies only while it stands.
    pub expected: ToolChain,
    /// Entries with `seq >= from_seq` are replaced by `entries`.
    pub from_seq: u64,
    /// The new entries, numbered from `from_seq` and chained.
    pub entries: Vec<ToolRecord>,
    /// The run's tool chain after the rewrite.
    pub head: ToolChain,
    /// Checkpoints whose `tool_count` is at least this covered the old journal and are
    /// quarantined; `None` when the rewrite only appends.
    pub quarantine_from: Option<u64>,
    /// The operator's action, recorded with the rewrite.
    pub action: JournalAction,
}

impl JournalRewrite {
    /// The quarantine reason of the checkpoints the rewrite invalidates.
    pub fn quarantine_reason(&self) -> String {
        format!(
            "covers the tool journal before an operator's {} of {} at seq {}",
            self.action.action,
            self.action.call_id,
            self.quarantine_from.unwrap_or(self.from_seq)
        )
    }
}

/// Decides what a RepairJournal does to `journal` (the run's whole journal, in order) whose
/// stored chain head is `head`.
pub fn plan_repair(
    journal: &[ToolRecord],
    head: ToolChain,
    request: &JournalRepair,
    now: SystemTime,
) -> Result<JournalRewrite> {
    let diagnosis = JournalDiagnosis::of(journal);
    let call = request.call_id.as_str();
    let first_corrupt = diagnosis
        .corrupt
        .iter()
        .find(|record| record.call_id.as_str() == call);
    let in_doubt = diagnosis
        .in_doubt
        .iter()
        .any(|doubt| doubt.call_id.as_str() == call);
    let (action, detail) = match &request.repair {
        Repair::MarkDone(output) => (
            "mark_done",
            format!("output {}", String::from_utf8_lossy(output)),
        ),
        Repair::Drop => ("drop", "corrupt entry removed".to_owned()),
    };
    let action = JournalAction {
        call_id: call.to_owned(),
        action: action.to_owned(),
        actor: request.actor.clone(),
        acted_at: now,
        detail,
    };
    let Some(corrupt) = first_corrupt else {
        return match (&request.repair, in_doubt) {
            (Repair::MarkDone(output), true) => {
                Ok(append_result(journal, head, request, output, action))
            }
            (Repair::Drop, _) => Err(Error::JournalState(format!(
                "call {call} has no corrupt journal entry to drop"
            ))),
            (Repair::MarkDone(_), false) => Err(Error::JournalState(format!(
                "call {call} is neither in doubt nor corrupt: nothing to mark done"
            ))),
        };
    };
    let from_seq = corrupt.seq;
    let mut entries = Vec::new();
    let mut replaced = false;
    for record in journal
        .iter()
        .skip(usize::try_from(from_seq - 1).unwrap_or(usize::MAX))
    {
        let damaged = record.call_id.as_str() == call && diagnosis.corrupt.contains(record);
        if !damaged {
            entries.push(record.clone());
            continue;
        }
        if let (Repair::MarkDone(output), false) = (&request.repair, replaced) {
            replaced = true;
            entries.push(ToolRecord {
                kind: EntryKind::Result,
                output: output.clone(),
                is_error: false,
                recorded_at: now,
                ..record.clone()
            });
        }
    }
    check_one_of_each_kind(journal, from_seq, &entries)?;
    let head_after = rechain(journal, from_seq, &mut entries);
    Ok(JournalRewrite {
        run: request.run.clone(),
        expected: head,
        from_seq,
        entries,
        head: head_after,
        quarantine_from: Some(from_seq),
        action,
    })
}

/// An in-doubt call marked done: its result is appended like any other.
fn append_result(
    journal: &[ToolRecord],
    head: ToolChain,
    request: &JournalRepair,
    output: &[u8],
    action: JournalAction,
) -> JournalRewrite {
    let intent = journal
        .iter()
        .find(|record| record.call_id == request.call_id && record.kind == EntryKind::Intent);
    let mut chain = head;
    let mut result = ToolRecord {
        call_id: request.call_id.clone(),
        tool_name: intent.map(|i| i.tool_name.clone()).unwrap_or_default(),
        step: intent.map_or(Step::new(0), |i| i.step),
        output: output.to_vec(),
        is_error: false,
        seq: head.len + 1,
        recorded_at: action.acted_at,
        chain: [0; 32],
        kind: EntryKind::Result,
        // The result completes the intent's call: the same arguments.
        arguments_digest: intent
            .map(|i| i.arguments_digest.clone())
            .unwrap_or_default(),
    };
    result.chain = chain.push_record(&result);
    JournalRewrite {
        run: request.run.clone(),
        expected: head,
        from_seq: head.len + 1,
        entries: vec![result],
        head: chain,
        quarantine_from: None,
        action,
    }
}

/// A call holds at most one intent and one result, before and after a repair.
fn check_one_of_each_kind(
    journal: &[ToolRecord],
    from_seq: u64,
    entries: &[ToolRecord],
) -> Result<()> {
    let kept = journal
        .iter()
        .take(usize::try_from(from_seq - 1).unwrap_or(usize::MAX));
    let mut counts: HashMap<(&str, EntryKind), u32> = HashMap::new();
    for record in kept.chain(entries) {
        let count = counts
            .entry((record.call_id.as_str(), record.kind))
            .or_default();
        *count += 1;
        if *count > 1 {
            return Err(Error::JournalState(format!(
                "call {} would hold two {:?} entries; drop its corrupt entry instead",
                record.call_id, record.kind
            )));
        }
    }
    Ok(())
}

/// Numbers `entries` from `from_seq` and chains them onto the stored chain value before it.
fn rechain(journal: &[ToolRecord], from_seq: u64, entries: &mut [ToolRecord]) -> ToolChain {
    let before = usize::try_from(from_seq - 1).unwrap_or(usize::MAX);
    let mut chain = ToolChain {
        len: from_seq - 1,
        head: before
            .checked_sub(1)
            .and_then(|index| journal.get(index))
            .map_or([0; 32], |record| record.chain),
    };
    for record in entries.iter_mut() {
        record.seq = chain.len + 1;
        record.chain = chain.push_record(record);
    }
    chain
}
