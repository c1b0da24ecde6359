//! The transition rules, case by case: claims, leases, retries, approvals and reaping.

use super::*;
use crate::domain::RunId;
use crate::queue::NewTask;

fn policy() -> RetryPolicy {
    RetryPolicy {
        initial_delay: Duration::from_secs(1),
        multiplier: 2.0,
        max_delay: Duration::from_secs(10),
        jitter: 0.0,
        max_attempts: 3,
    }
}

fn task() -> Task {
    Task::new(
        NewTask {
            run_id: RunId::parse("r").unwrap(),
            input: vec![],
            idempotency_key: None,
            retry_policy: policy(),
            auto_resume_hitl: true,
        },
        SystemTime::UNIX_EPOCH,
    )
}

#[test]
fn backoff_grows_by_the_multiplier_and_stops_at_the_cap() {
    let delays: Vec<_> = (1..=6)
        .map(|n| backoff(&policy(), n, 0.5).as_secs())
        .collect();
    assert_eq!(delays, vec![1, 2, 4, 8, 10, 10]);
}

#[test]
fn jitter_stays_within_its_fraction() {
    let spread = RetryPolicy {
        jitter: 0.5,
        ..policy()
    };
    assert_eq!(backoff(&spread, 2, 0.0), Duration::from_secs(1));
    assert_eq!(backoff(&spread, 2, 0.5), Duration::from_secs(2));
    assert!(backoff(&spread, 2, 0.999) < Duration::from_secs(3));
}

#[test]
fn a_stale_worker_is_fenced_after_a_reclaim() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
    let first = claim(&task(), "a", Duration::from_secs(5), now);
    let later = now + Duration::from_secs(10);
    assert!(claimable(&first, later));
    let second = claim(&first, "b", Duration::from_secs(5), later);
    assert_eq!(second.attempt, Attempt::new(2));
    let zombie = apply(
        &second,
        Transition::Complete {
            attempt: Attempt::new(1),
            result: vec![],
        },
        later,
    );
    assert!(matches!(zombie, Err(Error::LeaseLost(_))));
}

#[test]
fn transient_failures_retry_until_the_attempts_are_used_then_die() {
    let mut now = SystemTime::UNIX_EPOCH;
    let mut current = task();
    for expected_delay in [1, 2] {
        current = claim(&current, "w", Duration::from_secs(30), now);
        current = apply(
            &current,
            Transition::Fail {
                attempt: current.attempt,
                error: "timeout".into(),
                class: ErrorClass::Transient,
            },
            now,
        )
        .unwrap();
        assert_eq!(current.state, TaskState::Pending);
        assert_eq!(
            current.next_attempt_at,
            now + Duration::from_secs(expected_delay)
        );
        now = current.next_attempt_at;
    }
    current = claim(&current, "w", Duration::from_secs(30), now);
    let dead = apply(
        &current,
        Transition::Fail {
            attempt: current.attempt,
            error: "timeout".into(),
            class: ErrorClass::Transient,
        },
        now,
    )
    .unwrap();
    assert_eq!(dead.state, TaskState::Dead);
    let revived = apply(&dead, Transition::Requeue, now).unwrap();
    assert_eq!(
        (revived.state, revived.attempts_used),
        (TaskState::Pending, 0)
    );
}

#[test]
fn a_stale_task_on_its_last_attempt_is_the_reapers_and_never_a_claims() {
    let now = SystemTime::UNIX_EPOCH;
    let mut current = task();
    for _ in 0..policy().max_attempts {
        assert!(claimable(&current, now) && !reapable(&current, now));
        current = claim(&current, "w", Duration::from_secs(5), now);
        now_plus_lease_is_stale(&current);
        current.lease_expires_at = Some(now);
    }
    assert!(!claimable(&current, now));
    assert!(reapable(&current, now));
    let dead = reap(&current, now);
    assert_eq!(
        (dead.state, dead.attempt),
        (TaskState::Dead, Attempt::new(3))
    );
    assert!(!reapable(&dead, now) && !claimable(&dead, now));
}

fn now_plus_lease_is_stale(task: &Task) {
    let expiry = task.lease_expires_at.unwrap();
    assert!(!claimable(task, expiry - Duration::from_nanos(1)));
    assert!(!reapable(task, expiry - Duration::from_nanos(1)));
}

#[test]
fn release_and_approval_waits_charge_no_attempt() {
    let now = SystemTime::UNIX_EPOCH;
    let claimed = claim(&task(), "w", Duration::from_secs(30), now);
    let released = apply(
        &claimed,
        Transition::Release {
            attempt: Attempt::new(1),
        },
        now,
    )
    .unwrap();
    assert_eq!(released.attempts_used, 0);
    let claimed = claim(&released, "w", Duration::from_secs(30), now);
    let waiting = apply(
        &claimed,
        Transition::RequestApproval {
            attempt: Attempt::new(2),
            action: "send_email".into(),
            details: vec![],
        },
        now,
    )
    .unwrap();
    assert_eq!(
        (waiting.state, waiting.attempts_used),
        (TaskState::InputRequired, 0)
    );
    assert!(waiting.worker_id.is_none());
}
