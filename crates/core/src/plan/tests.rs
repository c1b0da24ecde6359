//! The planner's decisions, one table row per situation: what a backend read, what was asked,
//! and what it must do or refuse.

use crate::domain::Epoch;
use crate::domain::{MessageLog, ToolJournal};
use std::time::{Duration, SystemTime};

use super::{
    ExistingCheckpoint, IntentPlan, PrefixSource, RunHead, SaveContext, SavePlan, StoredCall,
    ToolPlan, plan_save, plan_tool_intent, plan_tool_result,
};
use crate::domain::{Checksum, Message, MessageChain, NewCheckpoint, ToolChain, ToolRecord};
use crate::error::Error;
use crate::testing::{checkpoint, message, run, tool};

/// What a plan comes to, without the parts that are fresh each time (ids, times).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Unchanged,
    Write {
        replace: bool,
        message_count: u64,
    },
    Invalid,
    Conflict,
    Fenced,
    /// The stored log is shorter than the client knows it to be: resync.
    LogBehind,
}

fn outcome(planned: &Result<SavePlan, Error>) -> Outcome {
    match planned {
        Ok(SavePlan::Unchanged(_)) => Outcome::Unchanged,
        Ok(SavePlan::Write {
            replace,
            message_count,
            ..
        }) => Outcome::Write {
            replace: *replace,
            message_count: *message_count,
        },
        Err(Error::InvalidField { .. } | Error::ChecksumMismatch(_)) => Outcome::Invalid,
        Err(Error::StepConflict(_)) => Outcome::Conflict,
        Err(Error::MessageLogBehind(_)) => Outcome::LogBehind,
        Err(Error::StepBehindLatest(_) | Error::StaleEpoch(_) | Error::EpochNotIssued(_)) => {
            Outcome::Fenced
        }
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

fn user(texts: &[&str]) -> Vec<Message> {
    texts.iter().map(|text| message("user", text)).collect()
}

/// A run that stored `log` at `epoch`: the context a backend reads for `request`, with the
/// prefix looked up as a backend does.
struct Run {
    epoch: Epoch,
    log: Vec<Message>,
    tools: ToolChain,
    latest_step: Option<u64>,
    existing: Option<ExistingCheckpoint>,
}

impl Run {
    fn new(epoch: u64, log: &[&str], latest_step: Option<u64>) -> Self {
        Self {
            epoch: Epoch::new(epoch),
            log: user(log),
            tools: ToolChain::EMPTY,
            latest_step,
            existing: None,
        }
    }

    /// A checkpoint already at the requested step, written at `epoch` with `checksum`.
    fn holding(mut self, epoch: u64, checksum: Checksum, quarantined: bool) -> Self {
        self.existing = Some(ExistingCheckpoint {
            id: "stored".to_owned(),
            epoch: Epoch::new(epoch),
            checksum,
            created_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1),
            quarantined,
            label: None,
        });
        self
    }

    fn head(&self) -> RunHead {
        RunHead {
            epoch: self.epoch,
            messages: MessageChain::over_messages(&self.log),
            tools: self.tools,
        }
    }

    fn context(&self, request: &NewCheckpoint) -> SaveContext {
        let head = self.head();
        let prefix = match SaveContext::prefix_source(&head, request.message_offset) {
            PrefixSource::Head => Some(head.messages.head),
            PrefixSource::Empty => Some([0; 32]),
            PrefixSource::Gap => None,
            PrefixSource::StoredAt(seq) => {
                Some(MessageChain::over_messages(&self.log[..=seq as usize]).head)
            }
        };
        SaveContext {
            head,
            existing: self.existing.clone(),
            latest_step: self.latest_step.map(crate::domain::Step::new),
            prefix,
            label_step: None,
            tools: Some(head.tools),
        }
    }
}

/// A Save at `step` and `epoch` appending `texts` at `offset`.
fn save(step: u64, epoch: u64, offset: u64, texts: &[&str]) -> NewCheckpoint {
    NewCheckpoint {
        epoch: Epoch::new(epoch),
        ..checkpoint(&run("default", "run-1"), step, offset, texts)
    }
}

/// The checksum `request` gets when written on top of `log`'s first `offset` messages.
fn checksum_of(request: &NewCheckpoint, log: &[&str]) -> Checksum {
    let fresh = Run::new(
        request.epoch.get(),
        &log[..request.message_offset as usize],
        None,
    );
    match plan_save(request, &fresh.context(request)) {
        Ok(SavePlan::Write { checksum, .. }) => checksum,
        other => panic!("expected a write: {other:?}"),
    }
}

#[test]
fn save_plans_follow_the_rules_of_save() {
    let step_two = save(2, 0, 1, &["b"]);
    let same_at_two = checksum_of(&step_two, &["a", "b"]);
    let other_at_two = checksum_of(&save(2, 0, 1, &["other"]), &["a", "other"]);
    let step_one = save(1, 0, 0, &["a"]);
    let same_at_one = checksum_of(&step_one, &["a"]);
    let mut with_checksum = save(3, 0, 2, &["c"]);
    with_checksum.client_checksum = Some(checksum_of(&with_checksum, &["a", "b"]));
    let mut with_wrong_checksum = with_checksum.clone();
    with_wrong_checksum.client_checksum = Some(other_at_two);

    let rows: Vec<(&str, Run, NewCheckpoint, Outcome)> = vec![
        (
            "the first save of a new run",
            Run::new(0, &[], None),
            save(1, 0, 0, &["a"]),
            Outcome::Write {
                replace: false,
                message_count: 1,
            },
        ),
        (
            "a save continuing the log",
            Run::new(0, &["a", "b"], Some(2)),
            save(3, 0, 2, &["c"]),
            Outcome::Write {
                replace: false,
                message_count: 3,
            },
        ),
        (
            "a save adding no messages",
            Run::new(0, &["a", "b"], Some(2)),
            save(3, 0, 2, &[]),
            Outcome::Write {
                replace: false,
                message_count: 2,
            },
        ),
        (
            "an identical retry of the latest step",
            Run::new(0, &["a", "b"], Some(2)).holding(0, same_at_two, false),
            step_two.clone(),
            Outcome::Unchanged,
        ),
        (
            "an identical retry of an older step after the log moved on",
            Run::new(0, &["a", "b"], Some(2)).holding(0, same_at_one, false),
            step_one.clone(),
            Outcome::Unchanged,
        ),
        (
            "different content at a saved step, same epoch",
            Run::new(0, &["a", "other"], Some(2)).holding(0, other_at_two, false),
            step_two.clone(),
            Outcome::Conflict,
        ),
        (
            "different content at a saved step from a newer epoch",
            Run::new(1, &["a"], Some(2)).holding(0, other_at_two, false),
            save(2, 1, 1, &["b"]),
            Outcome::Write {
                replace: true,
                message_count: 2,
            },
        ),
        (
            "different content at a quarantined step",
            Run::new(0, &["a"], Some(1)).holding(0, other_at_two, true),
            step_two.clone(),
            Outcome::Write {
                replace: true,
                message_count: 2,
            },
        ),
        (
            "identical content at a quarantined step is written again",
            Run::new(0, &["a"], Some(1)).holding(0, same_at_two, true),
            step_two.clone(),
            Outcome::Write {
                replace: true,
                message_count: 2,
            },
        ),
        (
            "a stale epoch",
            Run::new(2, &["a", "b"], Some(2)),
            save(3, 1, 2, &["c"]),
            Outcome::Fenced,
        ),
        (
            "a stale epoch retrying an identical save",
            Run::new(1, &["a", "b"], Some(2)).holding(0, same_at_two, false),
            step_two.clone(),
            Outcome::Fenced,
        ),
        (
            "an epoch never issued",
            Run::new(0, &[], None),
            save(1, 1, 0, &["a"]),
            Outcome::Fenced,
        ),
        (
            "a step behind the latest",
            Run::new(0, &["a", "b"], Some(5)),
            save(3, 0, 2, &["c"]),
            Outcome::Fenced,
        ),
        (
            "a message offset past the end of the log",
            Run::new(0, &["a", "b"], Some(2)),
            save(3, 0, 3, &["c"]),
            Outcome::LogBehind,
        ),
        (
            "a message offset overlapping the log",
            Run::new(0, &["a", "b"], Some(2)),
            save(3, 0, 1, &["c"]),
            Outcome::Invalid,
        ),
        (
            "a new step restarting the log at zero",
            Run::new(0, &["a", "b"], Some(2)),
            save(3, 0, 0, &["c"]),
            Outcome::Invalid,
        ),
        (
            "a client checksum that matches the content",
            Run::new(0, &["a", "b"], Some(2)),
            with_checksum,
            Outcome::Write {
                replace: false,
                message_count: 3,
            },
        ),
        (
            "a client checksum that does not match the content",
            Run::new(0, &["a", "b"], Some(2)),
            with_wrong_checksum,
            Outcome::Invalid,
        ),
    ];
    for (situation, stored, request, expected) in rows {
        let context = stored.context(&request);
        let planned = plan_save(&request, &context);
        assert_eq!(outcome(&planned), expected, "{situation}: {planned:?}");
        match planned {
            Ok(SavePlan::Write { rows, head, .. }) => {
                let offset = request.message_offset as usize;
                let mut log = stored.log[..offset].to_vec();
                log.extend(request.messages.iter().cloned());
                assert_eq!(
                    head.messages,
                    MessageChain::over_messages(&log),
                    "{situation}"
                );
                assert_eq!((head.epoch, head.tools), (stored.epoch, stored.tools));
                let seqs: Vec<u64> = rows.iter().map(|row| row.seq).collect();
                let expected_seqs: Vec<u64> = (offset as u64..log.len() as u64).collect();
                assert_eq!(seqs, expected_seqs, "{situation}");
            }
            Ok(SavePlan::Unchanged(saved)) => {
                let existing = stored.existing.unwrap();
                assert!(saved.already_existed, "{situation}");
                assert_eq!((saved.id, saved.checksum), (existing.id, existing.checksum));
                assert_eq!(saved.created_at, existing.created_at, "{situation}");
            }
            Err(_) => {}
        }
    }
}

fn stored_tool(call_id: &str, output: &str) -> ToolRecord {
    let mut chain = ToolChain::EMPTY;
    let request = tool(&run("default", "run-1"), call_id, output);
    ToolRecord {
        kind: crate::domain::EntryKind::Result,
        call_id: request.call_id,
        tool_name: request.tool_name,
        step: request.step,
        chain: chain.push_result(call_id, "search", request.step, output.as_bytes(), false),
        output: request.output,
        is_error: false,
        seq: 1,
        recorded_at: SystemTime::UNIX_EPOCH,
        arguments_digest: Default::default(),
    }
}

#[test]
fn tool_result_plans_insert_new_calls_and_replay_known_ones() {
    let key = run("default", "run-1");
    let head = |epoch: u64, tools: ToolChain| RunHead {
        epoch: Epoch::new(epoch),
        messages: MessageChain::EMPTY,
        tools,
    };
    let mut one_result = ToolChain::EMPTY;
    one_result.push_result("c1", "search", crate::domain::Step::new(1), b"42", false);
    let stored = stored_tool("c1", "42");
    let with_epoch = |epoch: u64, call_id: &str, output: &str| {
        let mut request = tool(&key, call_id, output);
        request.epoch = Epoch::new(epoch);
        request
    };

    // (situation, run head, stored record with the call id, request, expected seq or refusal)
    let rows = vec![
        (
            "a first result",
            head(0, ToolChain::EMPTY),
            None,
            with_epoch(0, "c1", "42"),
            Ok(Some(1)),
        ),
        (
            "a result after another",
            head(0, one_result),
            None,
            with_epoch(0, "c2", "7"),
            Ok(Some(2)),
        ),
        (
            "a retry with the same output",
            head(0, one_result),
            Some(stored.clone()),
            with_epoch(0, "c1", "42"),
            Ok(None),
        ),
        (
            "a retry with another output",
            head(0, one_result),
            Some(stored.clone()),
            with_epoch(0, "c1", "different"),
            Ok(None),
        ),
        (
            "a stale epoch",
            head(2, one_result),
            None,
            with_epoch(1, "c2", "7"),
            Err(()),
        ),
        (
            "a stale epoch retrying a known call",
            head(2, one_result),
            Some(stored.clone()),
            with_epoch(1, "c1", "42"),
            Err(()),
        ),
        (
            "an epoch never issued",
            head(0, ToolChain::EMPTY),
            None,
            with_epoch(3, "c1", "42"),
            Err(()),
        ),
    ];
    for (situation, head, existing, request, expected) in rows {
        let planned = plan_tool_result(&request, &head, StoredCall::result(existing.clone()));
        match (planned, expected) {
            (Ok(ToolPlan::Insert(record, tools)), Ok(Some(seq))) => {
                let mut chain = head.tools;
                let value = chain.push_record(&record);
                assert_eq!((record.seq, record.chain), (seq, value), "{situation}");
                assert_eq!(tools, chain, "{situation}");
                assert_eq!(record.output, request.output, "{situation}");
            }
            (Ok(ToolPlan::Existing(record)), Ok(None)) => {
                assert_eq!(Some(record), existing, "{situation}");
            }
            (Err(Error::StaleEpoch(_) | Error::EpochNotIssued(_)), Err(())) => {}
            (planned, expected) => {
                panic!("{situation}: planned {planned:?}, expected {expected:?}")
            }
        }
    }
}

#[test]
fn tool_intent_plans_insert_new_calls_and_answer_known_ones_with_what_they_hold() {
    let key = run("default", "run-1");
    let head = |epoch: u64, tools: ToolChain| RunHead {
        epoch: Epoch::new(epoch),
        messages: MessageChain::EMPTY,
        tools,
    };
    let mut one_result = ToolChain::EMPTY;
    one_result.push_result("c1", "search", crate::domain::Step::new(1), b"42", false);
    let result = stored_tool("c1", "42");
    let intent = ToolRecord {
        kind: crate::domain::EntryKind::Intent,
        output: Vec::new(),
        ..stored_tool("c1", "")
    };
    let request = |epoch: u64, call_id: &str| crate::domain::NewToolIntent {
        run: key.clone(),
        call_id: crate::domain::CallId::parse(call_id).unwrap(),
        tool_name: "send_email".to_owned(),
        step: crate::domain::Step::new(1),
        epoch: Epoch::new(epoch),
        arguments_digest: Default::default(),
    };
    type Stored = (Option<ToolRecord>, Option<ToolRecord>);
    let none: Stored = (None, None);
    // (situation, run head, stored (intent, result), request, expected seq or known or refusal)
    let rows = vec![
        (
            "a first intent",
            head(0, ToolChain::EMPTY),
            none.clone(),
            request(0, "c1"),
            Ok(Some(1)),
        ),
        (
            "an intent after a result",
            head(0, one_result),
            none.clone(),
            request(0, "c2"),
            Ok(Some(2)),
        ),
        (
            "a repeated intent",
            head(0, one_result),
            (Some(intent.clone()), None),
            request(0, "c1"),
            Ok(None),
        ),
        (
            "an intent for a completed call",
            head(0, one_result),
            (Some(intent.clone()), Some(result.clone())),
            request(0, "c1"),
            Ok(None),
        ),
        (
            "an intent after a result without one",
            head(0, one_result),
            (None, Some(result.clone())),
            request(0, "c1"),
            Ok(None),
        ),
        (
            "a stale epoch",
            head(2, one_result),
            none.clone(),
            request(1, "c2"),
            Err(()),
        ),
        (
            "a stale epoch repeating an intent",
            head(2, one_result),
            (Some(intent.clone()), None),
            request(1, "c1"),
            Err(()),
        ),
        (
            "an epoch never issued",
            head(0, ToolChain::EMPTY),
            none,
            request(3, "c1"),
            Err(()),
        ),
    ];
    for (situation, head, (stored_intent, stored_result), request, expected) in rows {
        let planned = plan_tool_intent(
            &request,
            &head,
            stored_intent.clone(),
            stored_result.clone(),
        );
        match (planned, expected) {
            (Ok(IntentPlan::Insert(record, tools)), Ok(Some(seq))) => {
                let mut chain = head.tools;
                let value = chain.push_record(&record);
                assert_eq!((record.seq, record.chain), (seq, value), "{situation}");
                assert_eq!(record.kind, crate::domain::EntryKind::Intent, "{situation}");
                assert_eq!(tools, chain, "{situation}");
            }
            (Ok(IntentPlan::Existing(outcome)), Ok(None)) => {
                assert!(outcome.already_recorded, "{situation}");
                assert_eq!(
                    (outcome.intent, outcome.result),
                    (stored_intent, stored_result),
                    "{situation}"
                );
            }
            (Err(Error::StaleEpoch(_) | Error::EpochNotIssued(_)), Err(())) => {}
            (planned, expected) => {
                panic!("{situation}: planned {planned:?}, expected {expected:?}")
            }
        }
    }
}
