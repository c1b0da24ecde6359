//! The claim statement restates `rules::claim` in SQL; this checks, scenario by scenario, that
//! the two still agree on which tasks are claimable and on every column of the outcome.

use std::time::{Duration, SystemTime};

use super::TestSchema;
use super::queue_claims::{at, new_task, tenant};
use crate::domain::Tenant;
use crate::queue::{Approval, ErrorClass, Task, TaskQueue, TaskState, rules};
use crate::store::postgres::PostgresStore;
use crate::store::postgres::queue_sql::INSERT_TASK;
use crate::store::postgres::task_row::{TaskParams, decode, stored_time};

/// Writes any task as it stands, however it got into that state; returns the row as stored.
async fn insert(store: &PostgresStore, tenant: &Tenant, task: &Task) -> Task {
    let client = store.client().await.unwrap();
    let params = TaskParams::new(tenant, task).unwrap();
    let row = client
        .query_one(INSERT_TASK, &params.insert())
        .await
        .unwrap();
    decode(&row).unwrap()
}

/// A task as a timestamptz column keeps it.
fn as_stored(mut task: Task) -> Task {
    task.lease_expires_at = task.lease_expires_at.map(stored_time);
    task.next_attempt_at = stored_time(task.next_attempt_at);
    task.created_at = stored_time(task.created_at);
    task.updated_at = stored_time(task.updated_at);
    if let Some(approval) = &mut task.approval {
        approval.requested_at = stored_time(approval.requested_at);
        approval.decided_at = approval.decided_at.map(stored_time);
    }
    task
}

/// Every kind of row a claim can meet, claimable or not, around `now`.
fn scenarios(now: SystemTime) -> Vec<(&'static str, Task)> {
    let base = || Task::new(new_task("run-1", None), at(0));
    let micro = Duration::from_micros(1);
    let running = |attempts_used: u32, lease_expires_at: SystemTime, worker: Option<&str>| Task {
        state: TaskState::Running,
        attempt: u64::from(attempts_used) + 4,
        attempts_used,
        worker_id: worker.map(str::to_owned),
        lease_expires_at: Some(lease_expires_at),
        ..base()
    };
    let in_state = |state| Task {
        state,
        next_attempt_at: at(1),
        ..base()
    };
    vec![
        ("fresh and due", base()),
        (
            "due exactly now",
            Task {
                next_attempt_at: stored_time(now),
                ..base()
            },
        ),
        (
            "due a microsecond from now",
            Task {
                next_attempt_at: stored_time(now) + micro,
                ..base()
            },
        ),
        (
            "retried, with an error and a decided approval",
            Task {
                attempt: 2,
                attempts_used: 2,
                last_error: Some("boom".into()),
                last_error_class: Some(ErrorClass::Fatal),
                approval: Some(Approval {
                    action: "send".into(),
                    details: b"d".to_vec(),
                    requested_at: at(2),
                    decision: Some(true),
                    decided_by: "alice".into(),
                    decided_at: Some(at(3)),
                    comment: "ok".into(),
                }),
                next_attempt_at: at(3),
                ..base()
            },
        ),
        (
            "pending with every attempt used (claims never kill pending tasks)",
            Task {
                attempts_used: 3,
                attempt: 3,
                ..base()
            },
        ),
        (
            "stale with attempts left",
            running(1, at(50), Some("w-old")),
        ),
        (
            "stale exactly now",
            running(2, stored_time(now), Some("w-old")),
        ),
        ("stale without a worker id", running(1, at(50), None)),
        (
            "stale on its final attempt",
            running(3, at(50), Some("w-old")),
        ),
        ("stale past its attempts", running(7, at(50), Some("w-old"))),
        (
            "leased a microsecond longer",
            running(1, stored_time(now) + micro, Some("w-busy")),
        ),
        ("waiting for approval", in_state(TaskState::InputRequired)),
        ("completed", in_state(TaskState::Completed)),
        ("failed", in_state(TaskState::Failed)),
        ("dead", in_state(TaskState::Dead)),
        ("cancelled", in_state(TaskState::Cancelled)),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claim_statement_does_what_rules_claim_does() {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    let t = tenant("default");
    // Both finer than a microsecond, so rounding must agree too.
    let now = at(100) + Duration::from_nanos(123_456_789);
    let lease = Duration::new(30, 999_999);

    let mut stored = Vec::new();
    for (name, task) in scenarios(now) {
        // Ids are time-ordered, so scenarios with one due time are claimed in this order.
        stored.push((name, insert(&store, &t, &task).await));
    }
    let mut expected_claims: Vec<Task> = Vec::new();
    let mut expected_rows = Vec::new();
    let mut deaths = 0;
    for (name, task) in &stored {
        let mut outcome = task.clone();
        if rules::claimable(task, now) {
            outcome = as_stored(rules::claim(task, "w-new", lease, now));
            match outcome.state {
                TaskState::Running => expected_claims.push(outcome.clone()),
                _ => deaths += 1,
            }
        }
        expected_rows.push((*name, outcome));
    }
    expected_claims.sort_by(|a, b| (a.next_attempt_at, &a.id).cmp(&(b.next_attempt_at, &b.id)));

    let claimed = store.claim(&t, "w-new", lease, 100, now).await.unwrap();
    for (name, expected) in &expected_rows {
        let row = store.get(&t, &expected.id).await.unwrap().unwrap();
        assert_eq!(&row, expected, "{name}");
    }
    assert_eq!(claimed, expected_claims);
    // The scenarios cover claims, reclaims and deaths.
    assert_eq!((expected_claims.len(), deaths), (7, 2));
}
