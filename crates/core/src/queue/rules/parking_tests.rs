//! The rules of a task whose approval decision does not resume it by itself
//! (`auto_resume_hitl` off): parked after the decision until `ResumeTask`.

use std::time::{Duration, SystemTime};

use super::{apply, claim, claimable, parked_after_decision};
use crate::domain::RunId;
use crate::error::Error;
use crate::queue::{NewTask, RetryPolicy, Task, TaskState, Transition};

const LEASE: Duration = Duration::from_secs(30);

fn at(secs: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
}

/// A task claimed at 0 that asked for approval at 1.
fn waiting(auto_resume_hitl: bool) -> Task {
    let new = NewTask {
        run_id: RunId::parse("r").unwrap(),
        input: vec![],
        idempotency_key: None,
        retry_policy: RetryPolicy::default(),
        auto_resume_hitl,
    };
    let claimed = claim(&Task::new(new, at(0)), "w", LEASE, at(0));
    let request = Transition::RequestApproval {
        attempt: claimed.attempt,
        action: "send_email".into(),
        details: vec![],
    };
    apply(&claimed, request, at(1)).unwrap()
}

fn decide(approved: bool) -> Transition {
    Transition::Decide {
        approved,
        decided_by: "alice".into(),
        comment: "checked".into(),
    }
}

fn is_refused(outcome: Result<Task, Error>) -> bool {
    matches!(outcome, Err(Error::TaskState(_)))
}

#[test]
fn a_decision_without_auto_resume_is_recorded_and_leaves_the_task_parked() {
    for approved in [true, false] {
        let waiting = waiting(false);

        let decided = apply(&waiting, decide(approved), at(2)).unwrap();

        assert_eq!(
            decided.state,
            TaskState::InputRequired,
            "approved: {approved}"
        );
        let approval = decided.approval.clone().unwrap();
        assert_eq!(approval.decision, Some(approved));
        assert_eq!(
            (approval.decided_by.as_str(), approval.decided_at),
            ("alice", Some(at(2)))
        );
        assert!(parked_after_decision(&decided));
        assert!(!claimable(&decided, at(1_000_000)));
    }
}

#[test]
fn with_auto_resume_a_decision_makes_the_task_pending_at_once() {
    let decided = apply(&waiting(true), decide(true), at(2)).unwrap();

    assert_eq!(
        (decided.state, decided.next_attempt_at),
        (TaskState::Pending, at(2))
    );
    assert!(!parked_after_decision(&decided));
    assert!(claimable(&decided, at(2)));
}

#[test]
fn resuming_a_parked_task_makes_it_claimable_with_its_decision_kept() {
    let parked = apply(&waiting(false), decide(false), at(2)).unwrap();

    let resumed = apply(&parked, Transition::ResumeTask, at(9)).unwrap();

    assert_eq!(
        (resumed.state, resumed.next_attempt_at),
        (TaskState::Pending, at(9))
    );
    assert_eq!(resumed.approval, parked.approval);
    assert_eq!(resumed.attempts_used, parked.attempts_used);
    assert!(claimable(&resumed, at(9)));
}

#[test]
fn a_parked_task_cannot_be_decided_again() {
    let parked = apply(&waiting(false), decide(true), at(2)).unwrap();

    assert!(is_refused(apply(&parked, decide(false), at(3))));
}

#[test]
fn resume_is_refused_for_a_task_not_parked_after_a_decision() {
    let undecided = waiting(false);
    let auto_resumed = apply(&waiting(true), decide(true), at(2)).unwrap();
    let resumed = apply(
        &apply(&waiting(false), decide(true), at(2)).unwrap(),
        Transition::ResumeTask,
        at(3),
    )
    .unwrap();
    let running = claim(&resumed, "w", LEASE, at(4));

    for task in [undecided, auto_resumed, resumed, running] {
        let state = task.state;
        assert!(
            is_refused(apply(&task, Transition::ResumeTask, at(5))),
            "{state:?}"
        );
    }
}

#[test]
fn a_parked_task_can_be_cancelled() {
    let parked = apply(&waiting(false), decide(true), at(2)).unwrap();

    let cancelled = apply(&parked, Transition::Cancel, at(3)).unwrap();

    assert_eq!(cancelled.state, TaskState::Cancelled);
}
