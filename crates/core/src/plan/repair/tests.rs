//! The repair planner's decisions, one table row per situation: the journal an operator sees,
//! what was asked, and what the rewrite does or why it is refused.

use crate::domain::ToolJournal;
use std::time::SystemTime;

use super::plan_repair;
use crate::domain::{
    CallId, EntryKind, JournalRepair, Repair, Step, ToolChain, ToolRecord, verify_tool_journal,
};
use crate::error::Error;
use crate::testing::run;

/// A journal of `(call id, kind, output)` entries, chained as a store would chain them.
fn journal(entries: &[(&str, EntryKind, &str)]) -> (Vec<ToolRecord>, ToolChain) {
    let mut chain = ToolChain::EMPTY;
    let records = entries
        .iter()
        .map(|(call_id, kind, output)| {
            let mut record = ToolRecord {
                kind: *kind,
                call_id: CallId::parse(call_id).unwrap(),
                tool_name: "send_email".to_owned(),
                step: Step::new(1),
                output: output.as_bytes().to_vec(),
                is_error: false,
                seq: chain.len + 1,
                recorded_at: SystemTime::UNIX_EPOCH,
                chain: [0; 32],
                arguments_digest: Default::default(),
            };
            record.chain = chain.push_record(&record);
            record
        })
        .collect();
    (records, chain)
}

/// Damages the tool name of entry `seq` (both kinds of leaf cover it) behind the chain's back.
fn damaged(mut records: Vec<ToolRecord>, seq: usize) -> Vec<ToolRecord> {
    records[seq - 1].tool_name = "\u{0}garbage".to_owned();
    records
}

/// What a rewrite comes to: where it starts, the call ids and kinds after it, what it
/// quarantines from.
type Outcome = (u64, Vec<(String, EntryKind)>, Option<u64>);

/// (situation, journal, call, repair, expected outcome or refusal)
type Row = (
    &'static str,
    Vec<ToolRecord>,
    &'static str,
    Repair,
    Result<Outcome, ()>,
);

#[test]
fn repairs_rewrite_from_the_damage_append_for_doubt_and_refuse_the_rest() {
    use EntryKind::{Intent, Result as Done};
    let (clean, _) = journal(&[("a", Done, "1"), ("m", Intent, ""), ("m", Done, "ok")]);
    let (doubt, _) = journal(&[("a", Done, "1"), ("m", Intent, "")]);
    let entries = |list: &[(&str, EntryKind)]| {
        list.iter()
            .map(|(id, kind)| (id.to_string(), *kind))
            .collect::<Vec<_>>()
    };
    let mark_done = || Repair::MarkDone(b"by hand".to_vec());
    let rows: Vec<Row> = vec![
        (
            "mark a corrupt result done",
            damaged(clean.clone(), 1),
            "a",
            mark_done(),
            Ok((
                1,
                entries(&[("a", Done), ("m", Intent), ("m", Done)]),
                Some(1),
            )),
        ),
        (
            "drop a corrupt result",
            damaged(clean.clone(), 1),
            "a",
            Repair::Drop,
            Ok((1, entries(&[("m", Intent), ("m", Done)]), Some(1))),
        ),
        (
            "mark a corrupt intent done",
            damaged(doubt.clone(), 2),
            "m",
            mark_done(),
            Ok((2, entries(&[("m", Done)]), Some(2))),
        ),
        (
            "mark an in-doubt call done",
            doubt.clone(),
            "m",
            mark_done(),
            Ok((3, entries(&[("m", Done)]), None)),
        ),
        (
            "drop a sound entry",
            clean.clone(),
            "a",
            Repair::Drop,
            Err(()),
        ),
        (
            "mark a completed call done",
            clean.clone(),
            "m",
            mark_done(),
            Err(()),
        ),
        (
            "mark an unknown call done",
            clean.clone(),
            "zz",
            mark_done(),
            Err(()),
        ),
        (
            "mark a corrupt intent done beside its sound result",
            damaged(clean.clone(), 2),
            "m",
            mark_done(),
            Err(()),
        ),
    ];
    let key = run("default", "run-1");
    for (situation, records, call, repair, expected) in rows {
        let head = ToolChain {
            len: records.len() as u64,
            head: records.last().map_or([0; 32], |record| record.chain),
        };
        let request = JournalRepair {
            run: key.clone(),
            call_id: CallId::parse(call).unwrap(),
            actor: "alice".to_owned(),
            repair,
        };
        let planned = plan_repair(&records, head, &request, SystemTime::UNIX_EPOCH);
        match (planned, expected) {
            (Ok(rewrite), Ok((from, after, quarantine_from))) => {
                let got: Vec<_> = rewrite
                    .entries
                    .iter()
                    .map(|record| (record.call_id.as_str().to_owned(), record.kind))
                    .collect();
                assert_eq!(
                    (rewrite.from_seq, got, rewrite.quarantine_from),
                    (from, after, quarantine_from),
                    "{situation}"
                );
                assert_eq!(rewrite.expected, head, "{situation}");
                assert_eq!(rewrite.action.actor, "alice", "{situation}");
                let mut whole = records[..(from - 1) as usize].to_vec();
                whole.extend(rewrite.entries.iter().cloned());
                verify_tool_journal(&whole).unwrap_or_else(|e| panic!("{situation}: {e}"));
                assert_eq!(rewrite.head.len, whole.len() as u64, "{situation}");
            }
            (Err(Error::JournalState(_)), Err(())) => {}
            (planned, expected) => {
                panic!("{situation}: planned {planned:?}, expected {expected:?}")
            }
        }
    }
}
