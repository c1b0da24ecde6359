//! Which transitions raise which events, and the delivery retry rule.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::*;
use crate::domain::{Attempt, RunId, Tenant};
use crate::notify::{Settlement, after_failure, retry_delay};
use crate::queue::{NewTask, RetryPolicy, Task, Transition, rules};

fn tenant() -> Tenant {
    Tenant::parse("acme").unwrap()
}

fn running(auto_resume_hitl: bool) -> Task {
    let task = Task::new(
        NewTask {
            run_id: RunId::parse("r1").unwrap(),
            input: Vec::new(),
            idempotency_key: None,
            retry_policy: RetryPolicy {
                max_attempts: 1,
                ..RetryPolicy::default()
            },
            auto_resume_hitl,
        },
        SystemTime::now(),
    );
    rules::claim(&task, "w", Duration::from_secs(30), SystemTime::now())
}

fn payload(event: &Event) -> Value {
    serde_json::from_slice(&event.payload).unwrap()
}

fn step(task: &Task, transition: Transition) -> (Task, Option<Event>) {
    let now = SystemTime::now();
    let next = rules::apply(task, transition, now).unwrap();
    let event = task_event(&tenant(), task, &next, now);
    (next, event)
}

fn attempt(task: &Task) -> Attempt {
    task.attempt
}

#[test]
fn an_approval_request_decision_and_resume_each_raise_their_event() {
    let task = running(false);
    let (parked, event) = step(
        &task,
        Transition::RequestApproval {
            attempt: attempt(&task),
            action: "send_email".into(),
            details: Vec::new(),
        },
    );
    let event = event.unwrap();
    assert_eq!(event.kind, EventKind::TaskInputRequired);
    let body = payload(&event);
    assert_eq!(body["type"], "task.input_required");
    assert_eq!(body["data"]["reason"], "approval_requested");
    assert_eq!(body["data"]["task_id"], task.id.as_str());
    let (decided, event) = step(
        &parked,
        Transition::Decide {
            approved: true,
            decided_by: "ops".into(),
            comment: "ok".into(),
        },
    );
    let event = event.unwrap();
    assert_eq!(event.kind, EventKind::TaskApproved);
    assert_eq!(payload(&event)["data"]["decided_by"], "ops");
    let (_, event) = step(&decided, Transition::ResumeTask);
    assert_eq!(event.unwrap().kind, EventKind::TaskResumed);
}

#[test]
fn an_in_doubt_park_says_so_and_a_rejection_is_a_rejection() {
    let task = running(true);
    let (parked, event) = step(
        &task,
        Transition::RequestApproval {
            attempt: attempt(&task),
            action: "in_doubt 3:charge:0".into(),
            details: Vec::new(),
        },
    );
    assert_eq!(payload(&event.unwrap())["data"]["reason"], "in_doubt");
    let (_, event) = step(
        &parked,
        Transition::Decide {
            approved: false,
            decided_by: "ops".into(),
            comment: String::new(),
        },
    );
    assert_eq!(event.unwrap().kind, EventKind::TaskRejected);
}

#[test]
fn a_failure_that_uses_the_last_attempt_raises_dead_and_routine_moves_raise_nothing() {
    let task = running(false);
    let (_, event) = step(
        &task,
        Transition::Heartbeat {
            attempt: attempt(&task),
            lease: Duration::from_secs(30),
        },
    );
    assert!(event.is_none());
    let (_, event) = step(
        &task,
        Transition::Fail {
            attempt: attempt(&task),
            error: "boom".into(),
            class: crate::queue::ErrorClass::Transient,
        },
    );
    let event = event.unwrap();
    assert_eq!(event.kind, EventKind::TaskDead);
    assert_eq!(payload(&event)["data"]["last_error"], "boom");
    let (_, event) = step(
        &task,
        Transition::Complete {
            attempt: attempt(&task),
            result: Vec::new(),
        },
    );
    assert!(event.is_none());
}

#[test]
fn retries_back_off_exponentially_within_the_jitter_and_give_up_at_the_limit() {
    assert_eq!(retry_delay(1), Duration::from_secs(5));
    assert_eq!(retry_delay(3), Duration::from_secs(20));
    assert_eq!(retry_delay(30), Duration::from_secs(3600));
    let now = SystemTime::UNIX_EPOCH;
    for (unit, expected) in [(0.0, 8), (0.5, 10), (1.0, 12)] {
        let Settlement::RetryAt { at, .. } = after_failure(2, "e".into(), now, unit) else {
            panic!("a second failure is retried");
        };
        assert_eq!(
            at.duration_since(now).unwrap(),
            Duration::from_secs(expected)
        );
    }
    assert_eq!(
        after_failure(MAX_DELIVERY_ATTEMPTS, "e".into(), now, 0.5),
        Settlement::GiveUp { error: "e".into() }
    );
}

#[test]
fn every_event_type_reads_back_from_its_stored_name() {
    for kind in EventKind::ALL {
        assert_eq!(EventKind::parse(kind.as_str()).unwrap(), kind);
    }
    for status in DeliveryStatus::ALL {
        assert_eq!(DeliveryStatus::parse(status.as_str()).unwrap(), status);
    }
}
