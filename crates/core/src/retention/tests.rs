//! The retention rules: which checkpoints each policy keeps, and what pins protect.

use super::*;
use crate::domain::CallId;

fn facts(step: u64, age_secs: u64, quarantined: bool, pinned: bool) -> CheckpointFacts {
    CheckpointFacts {
        step: Step::new(step),
        created_at: now() - Duration::from_secs(age_secs),
        quarantined,
        pinned_by: if pinned {
            vec![OPERATOR_PIN.to_owned()]
        } else {
            Vec::new()
        },
    }
}

fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000)
}

fn steps(list: Vec<Step>) -> Vec<u64> {
    list.into_iter().map(Step::get).collect()
}

/// Steps 1..=6, one minute apart (6 is the newest); 2 is quarantined, 3 pinned.
fn run() -> Vec<CheckpointFacts> {
    (1..=6)
        .map(|step| facts(step, (7 - step) * 60, step == 2, step == 3))
        .collect()
}

fn protected(latest: u64) -> Protected {
    Protected {
        latest_valid: Step::new(latest),
        journal_base: None,
    }
}

#[test]
fn policies_parse_and_print_round_trip() {
    for raw in ["all", "latest_only", "keep_last:3", "max_age:7days"] {
        let policy: RetentionPolicy = raw.parse().unwrap();
        assert_eq!(
            policy.to_string().parse::<RetentionPolicy>().unwrap(),
            policy
        );
    }
    assert_eq!(
        "max_age:36h".parse::<RetentionPolicy>().unwrap(),
        RetentionPolicy::MaxAge(Duration::from_secs(36 * 3600))
    );
    for bad in [
        "",
        "keep_last:0",
        "keep_last:x",
        "max_age:0s",
        "newest",
        "all:1",
    ] {
        assert!(bad.parse::<RetentionPolicy>().is_err(), "{bad:?} parsed");
    }
}

#[test]
fn all_keeps_everything() {
    assert!(prunable(RetentionPolicy::All, &run(), protected(6), now()).is_empty());
}

#[test]
fn latest_only_keeps_the_latest_valid_and_the_pinned() {
    let pruned = prunable(RetentionPolicy::LatestOnly, &run(), protected(6), now());
    assert_eq!(steps(pruned), vec![1, 2, 4, 5]);
}

#[test]
fn keep_last_counts_valid_checkpoints_only() {
    // Kept: 6 (latest), 5, 4 (the last three valid), 3 (pinned); 2 is quarantined.
    let pruned = prunable(RetentionPolicy::KeepLast(3), &run(), protected(6), now());
    assert_eq!(steps(pruned), vec![1, 2]);
    let pruned = prunable(RetentionPolicy::KeepLast(1), &run(), protected(6), now());
    assert_eq!(steps(pruned), vec![1, 2, 4, 5]);
}

#[test]
fn max_age_prunes_only_older_checkpoints() {
    // Ages: step 1 is 6 minutes old ... step 6 is 1 minute old.
    let policy = RetentionPolicy::MaxAge(Duration::from_secs(150));
    assert_eq!(
        steps(prunable(policy, &run(), protected(6), now())),
        vec![1, 2, 4]
    );
}

#[test]
fn nothing_at_or_above_the_latest_valid_checkpoint_goes() {
    // 5 and 6 failed verification after they were listed: 4 is the latest valid.
    let pruned = prunable(RetentionPolicy::LatestOnly, &run(), protected(4), now());
    assert_eq!(steps(pruned), vec![1, 2]);
    let old = RetentionPolicy::MaxAge(Duration::from_secs(1));
    assert_eq!(
        steps(prunable(old, &run(), protected(4), now())),
        vec![1, 2]
    );
}

#[test]
fn the_journal_base_survives() {
    let protected = Protected {
        latest_valid: Step::new(6),
        journal_base: Some(Step::new(4)),
    };
    let pruned = prunable(RetentionPolicy::LatestOnly, &run(), protected, now());
    assert_eq!(steps(pruned), vec![1, 2, 5]);
}

fn record(seq: u64, step: u64) -> ToolRecord {
    ToolRecord {
        kind: crate::domain::EntryKind::Result,
        call_id: CallId::parse(&format!("call-{seq}")).unwrap(),
        tool_name: "t".into(),
        step: Step::new(step),
        output: Vec::new(),
        is_error: false,
        seq,
        recorded_at: now(),
        chain: [0; 32],
        arguments_digest: Default::default(),
    }
}

#[test]
fn journal_base_is_the_newest_valid_checkpoint_before_the_uncovered_results() {
    let checkpoints = run();
    // Results 1-2 are covered by the latest checkpoint; none after: no base needed.
    let tools = [record(1, 1), record(2, 5)];
    assert_eq!(journal_base(&tools, 2, &checkpoints), None);
    // Result 3 was recorded for step 7, after the latest checkpoint: it replays on 6.
    let tools = [record(1, 1), record(2, 5), record(3, 7)];
    assert_eq!(journal_base(&tools, 2, &checkpoints), Some(Step::new(6)));
    // Recorded for step 3 after checkpoint 6 was saved: it replays on 1 (2 is quarantined).
    let tools = [record(1, 1), record(2, 5), record(3, 3)];
    assert_eq!(journal_base(&tools, 2, &checkpoints), Some(Step::new(1)));
}
