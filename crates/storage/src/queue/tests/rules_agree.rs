//! The Postgres claim restates `rules::claimable` and `rules::claim` in SQL, and the memory and
//! SQLite queues select in Rust; this checks, scenario by scenario, that every backend's claim
//! and reaper still do what the rules say, on which tasks they take and on every column of
//! the outcome.

use crate::queue::ClaimBatch;
use checkpointd_core::domain::Attempt;
use std::time::{Duration, SystemTime};

use checkpointd_core::time::whole_micros;

use super::{TestBackend, as_stored, at, new_task, tenant};
use crate::queue::{Approval, ErrorClass, Task, TaskState, rules};

/// Every kind of row a claim or the reaper can meet, theirs or not, around `now`. Times are
/// whole microseconds where they sit at the edge, so every backend keeps them exactly.
fn scenarios(now: SystemTime) -> Vec<(&'static str, Task)> {
    let base = || Task::new(new_task("run-1", None), at(0));
    let micro = Duration::from_micros(1);
    let running = |attempts_used: u32, lease_expires_at: SystemTime, worker: Option<&str>| Task {
        state: TaskState::Running,
        attempt: Attempt::new(u64::from(attempts_used) + 4),
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
                next_attempt_at: whole_micros(now),
                ..base()
            },
        ),
        (
            "due a microsecond from now",
            Task {
                next_attempt_at: whole_micros(now) + micro,
                ..base()
            },
        ),
        (
            "retried, with an error and a decided approval",
            Task {
                attempt: Attempt::new(2),
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
                attempt: Attempt::new(3),
                ..base()
            },
        ),
        (
            "stale with attempts left",
            running(1, at(50), Some("w-old")),
        ),
        (
            "stale exactly now",
            running(2, whole_micros(now), Some("w-old")),
        ),
        ("stale without a worker id", running(1, at(50), None)),
        (
            "stale on its final attempt",
            running(3, at(50), Some("w-old")),
        ),
        ("stale past its attempts", running(7, at(50), Some("w-old"))),
        (
            "leased a microsecond longer",
            running(1, whole_micros(now) + micro, Some("w-busy")),
        ),
        ("waiting for approval", in_state(TaskState::InputRequired)),
        ("completed", in_state(TaskState::Completed)),
        ("failed", in_state(TaskState::Failed)),
        ("dead", in_state(TaskState::Dead)),
        ("cancelled", in_state(TaskState::Cancelled)),
    ]
}

pub async fn the_claim_and_the_reaper_do_what_the_rules_say<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    // Both finer than a microsecond, so rounding must agree too.
    let now = at(100) + Duration::from_nanos(123_456_789);
    let lease = Duration::new(30, 999_999);

    let mut stored = Vec::new();
    for (name, task) in scenarios(now) {
        // Ids are time-ordered, so scenarios with one due time are claimed in this order.
        backend.put(&t, &task).await;
        stored.push((name, queue.get(&t, &task.id).await.unwrap().unwrap()));
    }
    let mut expected_claims: Vec<Task> = Vec::new();
    let mut expected_rows = Vec::new();
    for (name, task) in &stored {
        let mut outcome = task.clone();
        if rules::claimable(task, now) {
            outcome = as_stored::<B>(rules::claim(task, "w-new", lease, now));
            expected_claims.push(outcome.clone());
        }
        expected_rows.push((*name, outcome));
    }
    expected_claims.sort_by(|a, b| rules::claim_order(a).cmp(&rules::claim_order(b)));

    let claimed = queue
        .claim(&t, "w-new", lease, ClaimBatch::up_to(100), now)
        .await
        .unwrap();
    for (name, expected) in &expected_rows {
        let row = queue.get(&t, &expected.id).await.unwrap().unwrap();
        assert_eq!(&row, expected, "claim: {name}");
    }
    assert_eq!(claimed, expected_claims);

    let mut burials = 0;
    for (_, expected) in &mut expected_rows {
        if rules::reapable(expected, now) {
            *expected = as_stored::<B>(rules::reap(expected, now));
            burials += 1;
        }
    }
    assert_eq!(queue.reap_exhausted(now, 100).await.unwrap(), burials);
    for (name, expected) in &expected_rows {
        let row = queue.get(&t, &expected.id).await.unwrap().unwrap();
        assert_eq!(&row, expected, "reap: {name}");
    }
    // The scenarios cover claims, reclaims and burials.
    assert_eq!((expected_claims.len(), burials), (7, 2));
}
