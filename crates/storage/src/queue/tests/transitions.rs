//! The suite, part two: transitions after a claim — fencing, retries with backoff, dead
//! letters, requeue and approvals — checked against what a later read returns.

use crate::queue::ClaimBatch;
use checkpointd_core::domain::Attempt;
use std::time::Duration;

use super::{LEASE, TestBackend, at, claim_one, enqueue, new_task, policy, tenant};
use crate::queue::{ErrorClass, Task, TaskId, TaskState, Transition};
use checkpointd_core::error::{Error, Missing};

fn fail(attempt: u64, class: ErrorClass) -> Transition {
    Transition::Fail {
        attempt: Attempt::new(attempt),
        error: "upstream timed out".into(),
        class,
    }
}

pub async fn a_zombie_completion_after_a_reclaim_is_fenced_and_changes_nothing<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    enqueue(&*queue, &t, "run-1").await;
    let first = claim_one(&*queue, at(0)).await;
    let second = claim_one(&*queue, at(0) + LEASE).await;
    assert_eq!(
        (first.id.clone(), second.attempt.get()),
        (second.id.clone(), 2)
    );

    let zombie = Transition::Complete {
        attempt: first.attempt,
        result: b"stale".to_vec(),
    };
    let outcome = queue.update(&t, &first.id, zombie, at(40)).await;
    assert!(matches!(outcome, Err(Error::LeaseLost(_))), "{outcome:?}");
    assert_eq!(
        queue.get(&t, &second.id).await.unwrap(),
        Some(second.clone())
    );

    // The rejection released any row lock at once: the new owner goes on without waiting.
    let heartbeat = Transition::Heartbeat {
        attempt: Attempt::new(2),
        lease: LEASE,
    };
    let beat = queue
        .update(&t, &second.id, heartbeat, at(45))
        .await
        .unwrap();
    assert_eq!(beat.lease_expires_at, Some(at(45) + LEASE));
    let done = Transition::Complete {
        attempt: Attempt::new(2),
        result: b"fresh".to_vec(),
    };
    let done = queue.update(&t, &second.id, done, at(50)).await.unwrap();
    assert_eq!(done.result.as_deref(), Some(&b"fresh"[..]));
    assert_eq!(queue.get(&t, &done.id).await.unwrap(), Some(done));
}

pub async fn a_transient_failure_stores_now_plus_the_backoff_and_waits_for_it<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let task = enqueue(&*queue, &t, "run-1").await;
    // A `now` finer than the stored microseconds: what is returned is still what is stored.
    let failed_at = at(5) + Duration::from_nanos(123_456_789);
    let claimed = claim_one(&*queue, at(0)).await;
    let failed = queue
        .update(
            &t,
            &task.id,
            fail(claimed.attempt.get(), ErrorClass::Transient),
            failed_at,
        )
        .await
        .unwrap();
    let due = failed_at + policy().initial_delay;
    let expected = Task {
        state: TaskState::Pending,
        worker_id: None,
        lease_expires_at: None,
        next_attempt_at: B::stored(due),
        last_error: Some("upstream timed out".into()),
        last_error_class: Some(ErrorClass::Transient),
        updated_at: B::stored(failed_at),
        ..claimed.clone()
    };
    assert_eq!((failed.attempt.get(), failed.attempts_used), (1, 1));
    assert_eq!(
        (failed.approval.as_ref(), failed.result.as_ref()),
        (None, None)
    );
    assert_eq!(failed, expected);
    assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(failed));

    let almost = B::stored(due) - Duration::from_micros(1);
    assert!(
        queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(1), almost)
            .await
            .unwrap()
            .is_empty()
    );
    let retry = claim_one(&*queue, due).await;
    assert_eq!((retry.attempt.get(), retry.attempts_used), (2, 2));

    // The second failure waits initial_delay * multiplier.
    let failed_again_at = due + Duration::from_secs(1);
    let transition = fail(retry.attempt.get(), ErrorClass::Transient);
    queue
        .update(&t, &task.id, transition, failed_again_at)
        .await
        .unwrap();
    let stored = queue.get(&t, &task.id).await.unwrap().unwrap();
    assert_eq!(
        stored.next_attempt_at,
        B::stored(failed_again_at + Duration::from_secs(6))
    );
}

pub async fn exhausted_retries_make_a_dead_letter_that_requeue_revives<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let task = enqueue(&*queue, &t, "run-1").await;
    let mut now = at(0);
    for _ in 0..policy().max_attempts {
        let claimed = claim_one(&*queue, now).await;
        let transition = fail(claimed.attempt.get(), ErrorClass::Transient);
        queue.update(&t, &task.id, transition, now).await.unwrap();
        now += policy().max_delay;
    }
    let dead = queue.get(&t, &task.id).await.unwrap().unwrap();
    assert_eq!((dead.state, dead.attempts_used), (TaskState::Dead, 3));
    assert!(
        queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(1), now)
            .await
            .unwrap()
            .is_empty()
    );

    let revived = queue
        .update(&t, &task.id, Transition::Requeue, now)
        .await
        .unwrap();
    assert_eq!(
        (
            revived.state,
            revived.attempts_used,
            revived.next_attempt_at
        ),
        (TaskState::Pending, 0, now)
    );
    assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(revived));
    // The attempt, the fencing token, keeps counting up.
    assert_eq!(claim_one(&*queue, now).await.attempt.get(), 4);
}

pub async fn a_fatal_failure_is_final_and_refused_transitions_change_nothing<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let task = enqueue(&*queue, &t, "run-1").await;
    let claimed = claim_one(&*queue, at(0)).await;
    let failed = queue
        .update(
            &t,
            &task.id,
            fail(claimed.attempt.get(), ErrorClass::Fatal),
            at(1),
        )
        .await
        .unwrap();
    assert_eq!(failed.state, TaskState::Failed);
    assert_eq!(failed.last_error_class, Some(ErrorClass::Fatal));

    for refused in [
        Transition::Cancel,
        fail(claimed.attempt.get(), ErrorClass::Transient),
        Transition::Decide {
            approved: true,
            decided_by: "alice".into(),
            comment: String::new(),
        },
    ] {
        let outcome = queue.update(&t, &task.id, refused, at(2)).await;
        assert!(
            matches!(outcome, Err(Error::TaskState(_) | Error::LeaseLost(_))),
            "{outcome:?}"
        );
    }
    assert_eq!(queue.get(&t, &task.id).await.unwrap(), Some(failed));
}

pub async fn an_unknown_task_is_not_found<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let missing = TaskId::generate();
    assert_eq!(queue.get(&t, &missing).await.unwrap(), None);
    assert!(matches!(
        queue.update(&t, &missing, Transition::Requeue, at(0)).await,
        Err(Error::NotFound(Missing::Task { .. }))
    ));
}

pub async fn release_returns_the_task_at_once_without_charging_an_attempt<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let task = enqueue(&*queue, &t, "run-1").await;
    let claimed = claim_one(&*queue, at(0)).await;
    let release = Transition::Release {
        attempt: claimed.attempt,
    };
    let released = queue.update(&t, &task.id, release, at(3)).await.unwrap();
    assert_eq!(
        (
            released.state,
            released.attempts_used,
            released.next_attempt_at
        ),
        (TaskState::Pending, 0, at(3))
    );
    assert_eq!(claim_one(&*queue, at(3)).await.attempt.get(), 2);
}

/// Parks a fresh task's first claim for a decision on `action` with `details`.
async fn request_approval(
    queue: &dyn crate::queue::TaskQueue,
    action: &str,
    details: &[u8],
) -> Task {
    let t = tenant("default");
    let (task, _) = queue.enqueue(&t, new_task("run-1", None)).await.unwrap();
    let claimed = claim_one(queue, at(0)).await;
    let request = Transition::RequestApproval {
        attempt: claimed.attempt,
        action: action.into(),
        details: details.to_vec(),
    };
    let waiting = queue.update(&t, &task.id, request, at(1)).await.unwrap();
    assert_eq!(waiting.state, TaskState::InputRequired);
    assert_eq!(
        (waiting.worker_id.as_ref(), waiting.attempts_used),
        (None, 0)
    );
    waiting
}

pub async fn an_approval_request_and_decision_round_trip_through_the_database<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let waiting = request_approval(&*queue, "send_email", b"{\"to\":\"ceo\"}").await;
    let approval = waiting.approval.clone().unwrap();
    assert_eq!(approval.action, "send_email");
    assert_eq!(approval.details, b"{\"to\":\"ceo\"}");
    assert_eq!((approval.requested_at, approval.decision), (at(1), None));
    assert_eq!(
        queue.get(&t, &waiting.id).await.unwrap().as_ref(),
        Some(&waiting)
    );
    // Waiting for a human is not claimable, however long it takes.
    assert!(
        queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(1), at(100_000))
            .await
            .unwrap()
            .is_empty()
    );

    let decide = Transition::Decide {
        approved: true,
        decided_by: "alice".into(),
        comment: "fine".into(),
    };
    let decided = queue.update(&t, &waiting.id, decide, at(2)).await.unwrap();
    assert_eq!(
        (decided.state, decided.next_attempt_at),
        (TaskState::Pending, at(2))
    );
    let approval = decided.approval.clone().unwrap();
    assert_eq!(approval.decision, Some(true));
    assert_eq!(approval.decided_by, "alice");
    assert_eq!(approval.decided_at, Some(at(2)));
    assert_eq!(approval.comment, "fine");
    assert_eq!(approval.details, b"{\"to\":\"ceo\"}");
    assert_eq!(
        queue.get(&t, &waiting.id).await.unwrap(),
        Some(decided.clone())
    );
    // A second decision is refused: the task no longer waits.
    let again = Transition::Decide {
        approved: false,
        decided_by: "bob".into(),
        comment: String::new(),
    };
    assert!(matches!(
        queue.update(&t, &waiting.id, again, at(3)).await,
        Err(Error::TaskState(_))
    ));

    let resumed = claim_one(&*queue, at(2)).await;
    assert_eq!(resumed.attempt.get(), 2);
    assert_eq!(resumed.approval, decided.approval);
    // The whole task, approval included, reads back the same through a new handle.
    drop(queue);
    let queue = backend.open().await;
    assert_eq!(queue.get(&t, &waiting.id).await.unwrap(), Some(resumed));
}

pub async fn a_rejection_reads_back_as_a_rejection<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let waiting = request_approval(&*queue, "rm -rf", b"").await;
    let decide = Transition::Decide {
        approved: false,
        decided_by: "alice".into(),
        comment: "not to the ceo".into(),
    };
    let decided = queue.update(&t, &waiting.id, decide, at(2)).await.unwrap();
    let approval = decided.approval.clone().unwrap();
    assert_eq!(approval.decision, Some(false));
    assert_eq!(approval.comment, "not to the ceo");
    assert_eq!(approval.details, b"");
    assert_eq!(queue.get(&t, &waiting.id).await.unwrap(), Some(decided));
}

pub async fn completion_clears_the_error_of_an_earlier_attempt<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    enqueue(&*queue, &t, "run-1").await;
    claim_one(&*queue, at(0)).await;
    let reclaimed = claim_one(&*queue, at(0) + LEASE).await;
    assert!(reclaimed.last_error.is_some(), "{reclaimed:?}");

    let done = Transition::Complete {
        attempt: reclaimed.attempt,
        result: b"ok".to_vec(),
    };
    let done = queue.update(&t, &reclaimed.id, done, at(40)).await.unwrap();
    assert_eq!((done.last_error, done.last_error_class), (None, None));
    let stored = queue.get(&t, &reclaimed.id).await.unwrap().unwrap();
    assert_eq!(stored.state, TaskState::Completed);
    assert_eq!((stored.last_error, stored.last_error_class), (None, None));
    assert_eq!(stored.attempts_used, 2, "the attempts still tell the story");
}
