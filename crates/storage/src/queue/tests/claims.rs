//! The suite, part one: enqueue, claims, reclaims, concurrency, tenants, new handles and
//! paging.

use crate::queue::ClaimBatch;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use super::{LEASE, TestBackend, at, enqueue, ids, list, new_task, policy, rewrite, tenant};
use crate::queue::{TaskState, Transition};
use checkpointd_core::error::{Error, Missing};

pub async fn enqueue_with_a_known_idempotency_key_returns_the_existing_task<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let (first, existed) = queue
        .enqueue(&t, new_task("run-1", Some("k")))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!(
        (first.state, first.attempt.get(), first.attempts_used),
        (TaskState::Pending, 0, 0)
    );
    assert_eq!(first.retry_policy, policy());
    assert_eq!(first.idempotency_key.as_deref(), Some("k"));

    // Same key, different content: the first task wins and nothing new is stored.
    let (again, existed) = queue
        .enqueue(&t, new_task("run-2", Some("k")))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(again, first);

    let (other, existed) = queue
        .enqueue(&t, new_task("run-1", Some("k2")))
        .await
        .unwrap();
    assert!(!existed);
    assert_ne!(other.id, first.id);
    // Tasks without a key never collide.
    enqueue(&*queue, &t, "run-1").await;
    enqueue(&*queue, &t, "run-1").await;

    assert_eq!(list(&*queue, &t, None, None, 100).await.len(), 4);
    assert_eq!(queue.get(&t, &first.id).await.unwrap(), Some(first));
}

pub async fn concurrent_enqueues_with_one_key_store_one_task<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let racers: Vec<_> = (0..8)
        .map(|_| {
            let (queue, t) = (Arc::clone(&queue), t.clone());
            tokio::spawn(async move { queue.enqueue(&t, new_task("run-1", Some("k"))).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for racer in racers {
        outcomes.push(racer.await.unwrap().unwrap());
    }
    assert_eq!(outcomes.iter().filter(|(_, existed)| !existed).count(), 1);
    assert_eq!(
        outcomes
            .iter()
            .map(|(task, _)| &task.id)
            .collect::<HashSet<_>>()
            .len(),
        1
    );
    assert_eq!(list(&*queue, &t, None, None, 100).await.len(), 1);
}

pub async fn claim_takes_due_tasks_only_oldest_due_first<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let later = enqueue(&*queue, &t, "run-later").await;
    let early = enqueue(&*queue, &t, "run-early").await;
    let future = enqueue(&*queue, &t, "run-future").await;
    for (task, due) in [(&later, at(5)), (&early, at(1)), (&future, at(1_000))] {
        rewrite(&backend, &*queue, &t, &task.id, |task| {
            task.next_attempt_at = due
        })
        .await;
    }

    let claimed = queue
        .claim(&t, "w1", LEASE, ClaimBatch::up_to(10), at(10))
        .await
        .unwrap();
    assert_eq!(ids(&claimed), vec![early.id.clone(), later.id.clone()]);
    for task in &claimed {
        assert_eq!(task.state, TaskState::Running);
        assert_eq!((task.attempt.get(), task.attempts_used), (1, 1));
        assert_eq!(task.worker_id.as_deref(), Some("w1"));
        assert_eq!(task.lease_expires_at, Some(at(10) + LEASE));
        assert_eq!(task.updated_at, at(10));
        assert_eq!(queue.get(&t, &task.id).await.unwrap().as_ref(), Some(task));
    }
    // Leased tasks and the future one are not claimable yet.
    assert!(
        queue
            .claim(&t, "w2", LEASE, ClaimBatch::up_to(10), at(20))
            .await
            .unwrap()
            .is_empty()
    );
    let untouched = queue.get(&t, &future.id).await.unwrap().unwrap();
    assert_eq!(
        (untouched.state, untouched.attempt.get()),
        (TaskState::Pending, 0)
    );

    let claimed = queue
        .claim(&t, "w2", LEASE * 100, ClaimBatch::up_to(10), at(1_000))
        .await
        .unwrap();
    assert_eq!(
        claimed.len(),
        3,
        "the future task is due and both leases have expired"
    );
}

pub async fn claim_takes_at_most_the_batch_and_zero_takes_nothing<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    for n in 0..5 {
        enqueue(&*queue, &t, &format!("run-{n}")).await;
    }
    assert!(
        queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(0), at(0))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(2), at(0))
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(10), at(0))
            .await
            .unwrap()
            .len(),
        3
    );
}

pub async fn a_stale_running_task_is_reclaimed_with_the_next_attempt<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let task = enqueue(&*queue, &t, "run-1").await;
    queue
        .claim(&t, "w1", LEASE, ClaimBatch::up_to(1), at(0))
        .await
        .unwrap();

    // Still leased one microsecond before expiry, claimable at it.
    let before_expiry = at(0) + LEASE - Duration::from_micros(1);
    assert!(
        queue
            .claim(&t, "w2", LEASE, ClaimBatch::up_to(1), before_expiry)
            .await
            .unwrap()
            .is_empty()
    );
    let reclaimed = queue
        .claim(&t, "w2", LEASE, ClaimBatch::up_to(1), at(0) + LEASE)
        .await
        .unwrap();
    assert_eq!(ids(&reclaimed), vec![task.id.clone()]);
    let reclaimed = &reclaimed[0];
    assert_eq!((reclaimed.attempt.get(), reclaimed.attempts_used), (2, 2));
    assert_eq!(reclaimed.worker_id.as_deref(), Some("w2"));
    assert_eq!(reclaimed.lease_expires_at, Some(at(0) + LEASE + LEASE));
    assert_eq!(
        reclaimed.last_error.as_deref(),
        Some("lease of worker w1 expired; reclaimed")
    );
    assert_eq!(
        queue.get(&t, &task.id).await.unwrap().as_ref(),
        Some(reclaimed)
    );
}

/// Four handles on the database (four pools or connection sets, like separate processes) with
/// two claimers each race over 500 tasks; then every claimer completes what it got.
pub async fn concurrent_claimers_take_every_task_exactly_once<B: TestBackend>() {
    const TASKS: usize = 500;
    const CLAIMERS: usize = 8;
    let backend = B::fresh().await;
    let t = tenant("default");
    let mut handles = Vec::new();
    for _ in 0..CLAIMERS / 2 {
        handles.push(backend.open().await);
    }
    for n in 0..TASKS {
        enqueue(&*handles[n % handles.len()], &t, &format!("run-{n}")).await;
    }
    let claimers: Vec<_> = (0..CLAIMERS)
        .map(|n| {
            let queue = Arc::clone(&handles[n % handles.len()]);
            let t = t.clone();
            tokio::spawn(async move {
                let worker = format!("w{n}");
                let mut mine = Vec::new();
                loop {
                    let batch = queue
                        .claim(&t, &worker, LEASE, ClaimBatch::up_to(3), at(0))
                        .await
                        .unwrap();
                    if batch.is_empty() {
                        break;
                    }
                    assert!(
                        batch
                            .iter()
                            .all(|task| task.worker_id.as_deref() == Some(&worker))
                    );
                    mine.extend(batch);
                }
                for task in &mine {
                    let done = Transition::Complete {
                        attempt: task.attempt,
                        result: worker.clone().into_bytes(),
                    };
                    queue.update(&t, &task.id, done, at(1)).await.unwrap();
                }
                mine.into_iter().map(|task| task.id).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for claimer in claimers {
        claimed.extend(claimer.await.unwrap());
    }
    assert_eq!(claimed.len(), TASKS, "each task claimed exactly once");
    assert_eq!(claimed.iter().collect::<HashSet<_>>().len(), TASKS);
    let done = list(&*handles[0], &t, Some(TaskState::Completed), None, 1_000).await;
    assert_eq!(done.len(), TASKS);
    assert!(done.iter().all(|task| task.attempt.get() == 1));
}

pub async fn two_tenants_never_see_each_others_tasks<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let (a, b) = (tenant("tenant-a"), tenant("tenant-b"));
    let (task_a, _) = queue
        .enqueue(&a, new_task("shared", Some("k")))
        .await
        .unwrap();
    // The same idempotency key in another tenant is another task.
    let (task_b, existed) = queue
        .enqueue(&b, new_task("shared", Some("k")))
        .await
        .unwrap();
    assert!(!existed);
    assert_ne!(task_a.id, task_b.id);

    assert_eq!(queue.get(&b, &task_a.id).await.unwrap(), None);
    assert_eq!(
        ids(&list(&*queue, &b, None, None, 10).await),
        vec![task_b.id.clone()]
    );
    let claimed = queue
        .claim(&b, "w", LEASE, ClaimBatch::up_to(10), at(0))
        .await
        .unwrap();
    assert_eq!(ids(&claimed), vec![task_b.id.clone()]);
    assert!(matches!(
        queue
            .update(&b, &task_a.id, Transition::Cancel, at(0))
            .await,
        Err(Error::NotFound(Missing::Task { .. }))
    ));
    assert_eq!(queue.get(&a, &task_a.id).await.unwrap(), Some(task_a));
}

/// For the SQL backends the first handle is gone (its connections closed) before the second
/// opens: what a restarted server finds.
pub async fn a_new_handle_sees_the_tasks_their_keys_and_their_leases<B: TestBackend>() {
    let backend = B::fresh().await;
    let t = tenant("default");
    let (claimed, keyed) = {
        let queue = backend.open().await;
        let (keyed, _) = queue
            .enqueue(&t, new_task("run-1", Some("k")))
            .await
            .unwrap();
        let claimed = queue
            .claim(&t, "w", LEASE, ClaimBatch::up_to(1), at(0))
            .await
            .unwrap();
        (claimed[0].clone(), keyed)
    };
    let queue = backend.open().await;
    assert_eq!(
        queue.get(&t, &claimed.id).await.unwrap(),
        Some(claimed.clone())
    );
    let (again, existed) = queue
        .enqueue(&t, new_task("run-1", Some("k")))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(again.id, keyed.id);
    // The lease and its fence survive too.
    let done = queue
        .update(
            &t,
            &claimed.id,
            Transition::Complete {
                attempt: claimed.attempt,
                result: b"ok".to_vec(),
            },
            at(1),
        )
        .await
        .unwrap();
    assert_eq!(done.state, TaskState::Completed);
}

pub async fn list_pages_in_creation_order_and_filters_by_state<B: TestBackend>() {
    let backend = B::fresh().await;
    let queue = backend.open().await;
    let t = tenant("default");
    let mut created = Vec::new();
    for n in 0..5 {
        created.push(enqueue(&*queue, &t, &format!("run-{n}")).await.id);
    }
    let first = list(&*queue, &t, None, None, 2).await;
    assert_eq!(ids(&first), created[..2]);
    let rest = list(&*queue, &t, None, Some(&created[1]), 10).await;
    assert_eq!(ids(&rest), created[2..]);
    assert!(list(&*queue, &t, None, None, 0).await.is_empty());

    queue
        .claim(&t, "w", LEASE, ClaimBatch::up_to(2), at(0))
        .await
        .unwrap();
    let running = list(&*queue, &t, Some(TaskState::Running), None, 10).await;
    assert_eq!(ids(&running), created[..2]);
    let pending = list(&*queue, &t, Some(TaskState::Pending), Some(&created[2]), 10).await;
    assert_eq!(ids(&pending), created[3..]);
}
