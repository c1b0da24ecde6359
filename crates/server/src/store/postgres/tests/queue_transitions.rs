//! The task queue on Postgres, part two: transitions after a claim — fencing, retries with
//! backoff, dead letters, requeue and approvals — checked against what the rows hold.

use std::time::{Duration, SystemTime};

use super::TestSchema;
use super::queue_claims::{LEASE, at, enqueue, new_task, policy, tenant};
use crate::error::Error;
use crate::queue::{ErrorClass, Task, TaskId, TaskQueue, TaskState, Transition};
use crate::store::postgres::PostgresStore;
use crate::store::postgres::task_row::stored_time;

/// The columns a transition writes, read straight from the table.
#[derive(Debug, PartialEq)]
struct Row {
    state: String,
    attempt: i64,
    attempts_used: i64,
    worker_id: Option<String>,
    lease_expires_at: Option<SystemTime>,
    next_attempt_at: SystemTime,
    last_error: Option<String>,
    last_error_class: Option<String>,
    approval_decision: Option<bool>,
    result: Option<Vec<u8>>,
    updated_at: SystemTime,
}

async fn raw_row(schema: &TestSchema, task: &Task) -> Row {
    let row = super::raw_client(&schema.url())
        .await
        .query_one(
            "SELECT state, attempt, attempts_used, worker_id, lease_expires_at, next_attempt_at,
                    last_error, last_error_class, approval_decision, result, updated_at
               FROM tasks WHERE id = $1",
            &[&task.id.as_str()],
        )
        .await
        .unwrap();
    Row {
        state: row.get(0),
        attempt: row.get(1),
        attempts_used: row.get(2),
        worker_id: row.get(3),
        lease_expires_at: row.get(4),
        next_attempt_at: row.get(5),
        last_error: row.get(6),
        last_error_class: row.get(7),
        approval_decision: row.get(8),
        result: row.get(9),
        updated_at: row.get(10),
    }
}

async fn claim_one(store: &PostgresStore, now: SystemTime) -> Task {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_completion_after_a_reclaim_is_fenced_and_changes_nothing() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let t = tenant("default");
    enqueue(&store, &t, "run-1").await;
    let first = claim_one(&store, at(0)).await;
    let second = claim_one(&store, at(0) + LEASE).await;
    assert_eq!((first.id.clone(), second.attempt), (second.id.clone(), 2));
    let before = raw_row(&schema, &second).await;

    let zombie = Transition::Complete {
        attempt: first.attempt,
        result: b"stale".to_vec(),
    };
    let outcome = store.update(&t, &first.id, zombie, at(40)).await;
    assert!(
        matches!(outcome, Err(Error::FailedPrecondition(_))),
        "{outcome:?}"
    );
    assert_eq!(raw_row(&schema, &second).await, before);
    assert_eq!(
        store.get(&t, &second.id).await.unwrap(),
        Some(second.clone())
    );

    // The rejection released the row lock at once: the new owner goes on without waiting.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_failure_stores_now_plus_the_backoff_and_waits_for_it() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
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
        raw_row(&schema, &task).await,
        Row {
            state: "pending".into(),
            attempt: 1,
            attempts_used: 1,
            worker_id: None,
            lease_expires_at: None,
            next_attempt_at: stored_time(due),
            last_error: Some("upstream timed out".into()),
            last_error_class: Some("transient".into()),
            approval_decision: None,
            result: None,
            updated_at: stored_time(failed_at),
        }
    );
    assert_eq!(failed.next_attempt_at, stored_time(due));
    assert_eq!(
        store.get(&t, &task.id).await.unwrap().as_ref(),
        Some(&failed)
    );

    let almost = stored_time(due) - Duration::from_micros(1);
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
    assert_eq!(
        raw_row(&schema, &task).await.next_attempt_at,
        stored_time(expected)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_retries_make_a_dead_letter_that_requeue_revives() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
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
    assert_eq!(raw_row(&schema, &task).await.state, "dead");
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
    assert_eq!(raw_row(&schema, &task).await.state, "pending");
    // The attempt, the fencing token, keeps counting up.
    assert_eq!(claim_one(&store, now).await.attempt, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fatal_failure_is_final_and_refused_transitions_change_nothing() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
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
        raw_row(&schema, &task).await.last_error_class.as_deref(),
        Some("fatal")
    );

    let before = raw_row(&schema, &task).await;
    for refused in [
        Transition::Cancel,
        fail(claimed.attempt, ErrorClass::Transient),
        Transition::Decide {
            approved: true,
            decided_by: "alice".into(),
            comment: String::new(),
        },
    ] {
        let outcome = store.update(&t, &task.id, refused, at(2)).await;
        assert!(
            matches!(outcome, Err(Error::FailedPrecondition(_))),
            "{outcome:?}"
        );
    }
    assert_eq!(raw_row(&schema, &task).await, before);
    assert_eq!(store.get(&t, &task.id).await.unwrap(), Some(failed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_task_is_not_found() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let t = tenant("default");
    let missing = TaskId::generate();
    assert_eq!(store.get(&t, &missing).await.unwrap(), None);
    assert!(matches!(
        store.update(&t, &missing, Transition::Requeue, at(0)).await,
        Err(Error::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_returns_the_task_at_once_without_charging_an_attempt() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_request_and_decision_round_trip_through_the_table() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
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
        approved: false,
        decided_by: "alice".into(),
        comment: "not to the ceo".into(),
    };
    let decided = store.update(&t, &task.id, decide, at(2)).await.unwrap();
    assert_eq!(
        (decided.state, decided.next_attempt_at),
        (TaskState::Pending, at(2))
    );
    let approval = decided.approval.clone().unwrap();
    assert_eq!(approval.decision, Some(false));
    assert_eq!(approval.decided_by, "alice");
    assert_eq!(approval.decided_at, Some(at(2)));
    assert_eq!(approval.comment, "not to the ceo");
    assert_eq!(approval.details, b"{\"to\":\"ceo\"}");
    assert_eq!(raw_row(&schema, &task).await.approval_decision, Some(false));
    // A second decision is refused: the task no longer waits.
    let again = Transition::Decide {
        approved: true,
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
    // The whole task, approval included, reads back the same through a new pool.
    drop(store);
    let store = schema.store().await;
    assert_eq!(store.get(&t, &task.id).await.unwrap(), Some(resumed));
}
