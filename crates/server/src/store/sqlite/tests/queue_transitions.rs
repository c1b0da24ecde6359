//! The task queue on SQLite, part two: transitions after a claim — fencing, retries with
//! backoff, dead letters, requeue and approvals — checked against what the rows hold.

use std::time::Duration;

use super::queue_claims::{LEASE, at, enqueue, new_task, policy, tenant};
use super::*;
use crate::queue::{ErrorClass, Task, TaskQueue, TaskState, Transition};

/// The columns a transition writes, read straight from the file.
#[derive(Debug, PartialEq)]
struct Row {
    state: String,
    attempt: i64,
    attempts_used: i64,
    worker_id: Option<String>,
    lease_expires_at: Option<i64>,
    next_attempt_at: i64,
    last_error: Option<String>,
    last_error_class: Option<String>,
    approval_decision: Option<i64>,
}

fn raw_row(db: &Db, task: &Task) -> Row {
    db.raw()
        .query_row(
            "SELECT state, attempt, attempts_used, worker_id, lease_expires_at, next_attempt_at,
                    last_error, last_error_class, approval_decision
               FROM tasks WHERE id = ?1",
            [task.id.as_str()],
            |row| {
                Ok(Row {
                    state: row.get(0)?,
                    attempt: row.get(1)?,
                    attempts_used: row.get(2)?,
                    worker_id: row.get(3)?,
                    lease_expires_at: row.get(4)?,
                    next_attempt_at: row.get(5)?,
                    last_error: row.get(6)?,
                    last_error_class: row.get(7)?,
                    approval_decision: row.get(8)?,
                })
            },
        )
        .unwrap()
}

fn micros(time: std::time::SystemTime) -> i64 {
    super::super::codec::to_micros(time)
}

async fn claim_one(store: &SqliteStore, now: std::time::SystemTime) -> Task {
    let mut claimed = store
        .claim(&tenant("default"), "w", LEASE, 1, now)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "expected one claimable task at {now:?}");
    claimed.remove(0)
}

fn fail(attempt: u64, class: ErrorClass) -> Transition {
    Transition::Fail {
        attempt,
        error: "upstream timed out".into(),
        class,
    }
}

#[tokio::test]
async fn a_zombie_completion_after_a_reclaim_is_fenced_and_changes_nothing() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    enqueue(&store, &t, "run-1").await;
    let first = claim_one(&store, at(0)).await;
    let second = claim_one(&store, at(0) + LEASE).await;
    assert_eq!((first.id.clone(), second.attempt), (second.id.clone(), 2));
    let before = raw_row(&db, &second);

    let zombie = Transition::Complete {
        attempt: first.attempt,
        result: b"stale".to_vec(),
    };
    let outcome = store.update(&t, &first.id, zombie, at(40)).await;
    assert!(
        matches!(outcome, Err(Error::FailedPrecondition(_))),
        "{outcome:?}"
    );
    assert_eq!(raw_row(&db, &second), before);
    assert_eq!(
        store.get(&t, &second.id).await.unwrap(),
        Some(second.clone())
    );

    // The new owner is unaffected and can finish.
    let heartbeat = Transition::Heartbeat {
        attempt: 2,
        lease: LEASE,
    };
    let beat = store
        .update(&t, &second.id, heartbeat, at(45))
        .await
        .unwrap();
    assert_eq!(beat.lease_expires_at, Some(at(45) + LEASE));
    let done = Transition::Complete {
        attempt: 2,
        result: b"fresh".to_vec(),
    };
    let done = store.update(&t, &second.id, done, at(50)).await.unwrap();
    assert_eq!(done.result.as_deref(), Some(&b"fresh"[..]));
    assert_eq!(store.get(&t, &done.id).await.unwrap(), Some(done));
}

#[tokio::test]
async fn a_transient_failure_stores_now_plus_the_backoff_and_waits_for_it() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    // A `now` finer than the stored microseconds: what is returned is still what is stored.
    let failed_at = at(5) + Duration::from_nanos(123_456_789);
    let claimed = claim_one(&store, at(0)).await;
    let failed = store
        .update(
            &t,
            &task.id,
            fail(claimed.attempt, ErrorClass::Transient),
            failed_at,
        )
        .await
        .unwrap();
    let due = failed_at + policy().initial_delay;
    assert_eq!(
        raw_row(&db, &task),
        Row {
            state: "pending".into(),
            attempt: 1,
            attempts_used: 1,
            worker_id: None,
            lease_expires_at: None,
            next_attempt_at: micros(due),
            last_error: Some("upstream timed out".into()),
            last_error_class: Some("transient".into()),
            approval_decision: None,
        }
    );
    assert_eq!(
        store.get(&t, &task.id).await.unwrap().as_ref(),
        Some(&failed)
    );

    let almost = due - Duration::from_micros(1);
    assert!(
        store
            .claim(&t, "w", LEASE, 1, almost)
            .await
            .unwrap()
            .is_empty()
    );
    let retry = claim_one(&store, due).await;
    assert_eq!((retry.attempt, retry.attempts_used), (2, 2));

    // The second failure waits initial_delay * multiplier.
    let failed_again_at = due + Duration::from_secs(1);
    let transition = fail(retry.attempt, ErrorClass::Transient);
    store
        .update(&t, &task.id, transition, failed_again_at)
        .await
        .unwrap();
    let expected = failed_again_at + Duration::from_secs(6);
    assert_eq!(raw_row(&db, &task).next_attempt_at, micros(expected));
}

#[tokio::test]
async fn exhausted_retries_make_a_dead_letter_that_requeue_revives() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    let mut now = at(0);
    for _ in 0..policy().max_attempts {
        let claimed = claim_one(&store, now).await;
        let transition = fail(claimed.attempt, ErrorClass::Transient);
        store.update(&t, &task.id, transition, now).await.unwrap();
        now += policy().max_delay;
    }
    let dead = store.get(&t, &task.id).await.unwrap().unwrap();
    assert_eq!((dead.state, dead.attempts_used), (TaskState::Dead, 3));
    assert!(
        store
            .claim(&t, "w", LEASE, 1, now)
            .await
            .unwrap()
            .is_empty()
    );

    let revived = store
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
    assert_eq!(raw_row(&db, &task).state, "pending");
    // The attempt, the fencing token, keeps counting up.
    assert_eq!(claim_one(&store, now).await.attempt, 4);
}

#[tokio::test]
async fn a_fatal_failure_is_final_and_refused_transitions_change_nothing() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    let claimed = claim_one(&store, at(0)).await;
    let failed = store
        .update(
            &t,
            &task.id,
            fail(claimed.attempt, ErrorClass::Fatal),
            at(1),
        )
        .await
        .unwrap();
    assert_eq!(failed.state, TaskState::Failed);
    assert_eq!(
        raw_row(&db, &task).last_error_class.as_deref(),
        Some("fatal")
    );

    let before = raw_row(&db, &task);
    for refused in [
        Transition::Cancel,
        fail(claimed.attempt, ErrorClass::Transient),
    ] {
        let outcome = store.update(&t, &task.id, refused, at(2)).await;
        assert!(
            matches!(outcome, Err(Error::FailedPrecondition(_))),
            "{outcome:?}"
        );
    }
    assert_eq!(raw_row(&db, &task), before);
    assert_eq!(store.get(&t, &task.id).await.unwrap(), Some(failed));
}

#[tokio::test]
async fn an_unknown_task_is_not_found() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let missing = crate::queue::TaskId::generate();
    assert_eq!(store.get(&t, &missing).await.unwrap(), None);
    assert!(matches!(
        store.update(&t, &missing, Transition::Requeue, at(0)).await,
        Err(Error::NotFound(_))
    ));
}

#[tokio::test]
async fn release_returns_the_task_at_once_without_charging_an_attempt() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    let claimed = claim_one(&store, at(0)).await;
    let release = Transition::Release {
        attempt: claimed.attempt,
    };
    let released = store.update(&t, &task.id, release, at(3)).await.unwrap();
    assert_eq!(
        (
            released.state,
            released.attempts_used,
            released.next_attempt_at
        ),
        (TaskState::Pending, 0, at(3))
    );
    assert_eq!(claim_one(&store, at(3)).await.attempt, 2);
}

#[tokio::test]
async fn an_approval_request_and_decision_round_trip_through_the_file() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let (task, _) = store.enqueue(&t, new_task("run-1", None)).await.unwrap();
    let claimed = claim_one(&store, at(0)).await;
    let request = Transition::RequestApproval {
        attempt: claimed.attempt,
        action: "send_email".into(),
        details: b"{\"to\":\"ceo\"}".to_vec(),
    };
    let waiting = store.update(&t, &task.id, request, at(1)).await.unwrap();
    assert_eq!(waiting.state, TaskState::InputRequired);
    assert_eq!(
        (waiting.worker_id.as_ref(), waiting.attempts_used),
        (None, 0)
    );
    let approval = waiting.approval.clone().unwrap();
    assert_eq!(approval.action, "send_email");
    assert_eq!(approval.details, b"{\"to\":\"ceo\"}");
    assert_eq!((approval.requested_at, approval.decision), (at(1), None));
    assert_eq!(
        store.get(&t, &task.id).await.unwrap().as_ref(),
        Some(&waiting)
    );
    // Waiting for a human is not claimable, however long it takes.
    assert!(
        store
            .claim(&t, "w", LEASE, 1, at(100_000))
            .await
            .unwrap()
            .is_empty()
    );

    let decide = Transition::Decide {
        approved: true,
        decided_by: "alice".into(),
        comment: "fine".into(),
    };
    let decided = store.update(&t, &task.id, decide, at(2)).await.unwrap();
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
    assert_eq!(raw_row(&db, &task).approval_decision, Some(1));
    // A second decision is refused: the task no longer waits.
    let again = Transition::Decide {
        approved: false,
        decided_by: "bob".into(),
        comment: String::new(),
    };
    assert!(matches!(
        store.update(&t, &task.id, again, at(3)).await,
        Err(Error::FailedPrecondition(_))
    ));

    let resumed = claim_one(&store, at(2)).await;
    assert_eq!(resumed.attempt, 2);
    assert_eq!(resumed.approval, decided.approval);
    // The whole task, approval included, survives a reopen.
    drop(store);
    let store = db.open().await;
    assert_eq!(store.get(&t, &task.id).await.unwrap(), Some(resumed));
}

#[tokio::test]
async fn a_rejection_is_stored_as_zero() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    let claimed = claim_one(&store, at(0)).await;
    let request = Transition::RequestApproval {
        attempt: claimed.attempt,
        action: "rm -rf".into(),
        details: Vec::new(),
    };
    store.update(&t, &task.id, request, at(1)).await.unwrap();
    let decide = Transition::Decide {
        approved: false,
        decided_by: "alice".into(),
        comment: "no".into(),
    };
    let decided = store.update(&t, &task.id, decide, at(2)).await.unwrap();
    assert_eq!(decided.approval.unwrap().decision, Some(false));
    assert_eq!(raw_row(&db, &task).approval_decision, Some(0));
}
