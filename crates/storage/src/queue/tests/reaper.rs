//! The suite, part three: stale tasks whose attempts are used up are left alone by claims and
//! buried by `reap_exhausted`, across tenants and in batches.

use crate::queue::ClaimBatch;
use std::time::Duration;

use super::{LEASE, TestBackend, at, claim_one, enqueue, policy, tenant};
use crate::queue::{ErrorClass, NewTask, RetryPolicy, TaskState, Transition};
use checkpointd_core::domain::{Attempt, RunId};
use checkpointd_core::error::Error;

fn one_attempt_task(run_id: &str) -> NewTask {
    NewTask {
        run_id: RunId::parse(run_id).unwrap(),
        input: Vec::new(),
        idempotency_key: None,
        retry_policy: RetryPolicy {
            max_attempts: 1,
            ..policy()
        },
        auto_resume_hitl: true,
    }
}

pub async fn a_stale_task_on_its_final_attempt_is_left_by_claims_and_buried_by_the_reaper<
    B: TestBackend,
>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let task = enqueue(&*queue, &t, "run-1").await;
    let mut now = at(0);
    for _ in 0..policy().max_attempts {
        claim_one(&*queue, now).await;
        now += LEASE;
    }
    assert!(
        queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(1), now)
            .await
            .unwrap()
            .is_empty()
    );
    let stale = queue.get(&t, &task.id).await.unwrap().unwrap();
    assert_eq!(
        (stale.state, stale.attempt.get(), stale.attempts_used),
        (TaskState::Running, 3, 3),
        "a claim changes nothing it does not take"
    );
    let before_expiry = now - Duration::from_micros(1);
    assert_eq!(queue.reap_exhausted(before_expiry, 10).await.unwrap(), 0);

    assert_eq!(queue.reap_exhausted(now, 10).await.unwrap(), 1);
    let dead = queue.get(&t, &task.id).await.unwrap().unwrap();
    assert_eq!(dead.state, TaskState::Dead);
    assert_eq!((dead.attempt.get(), dead.attempts_used), (3, 3));
    assert_eq!(
        (dead.worker_id.as_ref(), dead.lease_expires_at),
        (None, None)
    );
    assert_eq!(dead.updated_at, now);
    assert_eq!(
        dead.last_error.as_deref(),
        Some("lease of worker w expired on the final attempt")
    );
    assert_eq!(dead.last_error_class, Some(ErrorClass::Transient));
    assert_eq!(queue.reap_exhausted(now, 10).await.unwrap(), 0);

    // The last lease holder is fenced off, and an operator can still revive the task.
    let zombie = Transition::Complete {
        attempt: Attempt::new(3),
        result: Vec::new(),
    };
    assert!(matches!(
        queue.update(&t, &task.id, zombie, now).await,
        Err(Error::LeaseLost(_))
    ));
    let revived = queue
        .update(&t, &task.id, Transition::Requeue, now)
        .await
        .unwrap();
    assert_eq!(revived.state, TaskState::Pending);
}

pub async fn the_reaper_buries_every_tenants_exhausted_tasks_in_batches_and_nothing_else<
    B: TestBackend,
>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let (a, b) = (tenant("tenant-a"), tenant("tenant-b"));
    let mut doomed = Vec::new();
    for (n, owner) in [&a, &b, &a].into_iter().enumerate() {
        let (task, _) = queue
            .enqueue(owner, one_attempt_task(&format!("doomed-{n}")))
            .await
            .unwrap();
        queue
            .claim(owner, "w", LEASE, ClaimBatch::up_to(1), at(0))
            .await
            .unwrap();
        doomed.push((owner.clone(), task.id));
    }
    // Stale with an attempt left, and on its last attempt but still leased: not the reaper's.
    let retried = enqueue(&*queue, &a, "retried").await;
    queue
        .claim(&a, "w", LEASE, ClaimBatch::up_to(1), at(0))
        .await
        .unwrap();
    let (leased, _) = queue.enqueue(&b, one_attempt_task("leased")).await.unwrap();
    queue
        .claim(&b, "w", LEASE * 10, ClaimBatch::up_to(1), at(0))
        .await
        .unwrap();

    let now = at(0) + LEASE;
    assert_eq!(queue.reap_exhausted(now, 0).await.unwrap(), 0);
    assert_eq!(queue.reap_exhausted(now, 2).await.unwrap(), 2);
    assert_eq!(queue.reap_exhausted(now, 2).await.unwrap(), 1);
    assert_eq!(queue.reap_exhausted(now, 2).await.unwrap(), 0);
    for (owner, id) in &doomed {
        let task = queue.get(owner, id).await.unwrap().unwrap();
        assert_eq!(task.state, TaskState::Dead, "{owner} {id}");
    }
    let leased = queue.get(&b, &leased.id).await.unwrap().unwrap();
    assert_eq!(
        (leased.state, leased.attempt.get()),
        (TaskState::Running, 1)
    );
    let reclaimed = queue
        .claim(&a, "w2", LEASE, ClaimBatch::up_to(10), now)
        .await
        .unwrap();
    assert_eq!(reclaimed.len(), 1);
    assert_eq!(
        (&reclaimed[0].id, reclaimed[0].attempt.get()),
        (&retried.id, 2)
    );
}

pub async fn a_claim_passes_over_exhausted_stale_tasks_to_the_claimable_ones<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    // Due first, so first in claim order, but stale on its only attempt.
    let (exhausted, _) = queue
        .enqueue(&t, one_attempt_task("exhausted"))
        .await
        .unwrap();
    claim_one(&*queue, at(0)).await;
    let waiting = enqueue(&*queue, &t, "waiting").await;

    let claimed = claim_one(&*queue, at(0) + LEASE).await;
    assert_eq!(claimed.id, waiting.id);
    let untouched = queue.get(&t, &exhausted.id).await.unwrap().unwrap();
    assert_eq!(
        (untouched.state, untouched.attempt.get()),
        (TaskState::Running, 1)
    );
}
