//! The task queue on SQLite, part one: enqueue, claims, reclaims, concurrency, tenants and
//! reopening. Time is moved by passing `now`, and made to pass by rewriting timestamps.

use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::*;
use crate::queue::{NewTask, RetryPolicy, Task, TaskId, TaskQueue, TaskState, Transition};

pub(super) const LEASE: Duration = Duration::from_secs(30);

/// A moment `secs` after a base far enough ahead that every task enqueued now is due at it.
pub(super) fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(4_000_000_000 + secs)
}

pub(super) fn tenant(name: &str) -> Tenant {
    Tenant::parse(name).unwrap()
}

pub(super) fn policy() -> RetryPolicy {
    RetryPolicy {
        initial_delay: Duration::from_secs(2),
        multiplier: 3.0,
        max_delay: Duration::from_secs(60),
        jitter: 0.0,
        max_attempts: 3,
    }
}

pub(super) fn new_task(run_id: &str, key: Option<&str>) -> NewTask {
    NewTask {
        run_id: RunId::parse(run_id).unwrap(),
        input: format!("{{\"run\":\"{run_id}\"}}").into_bytes(),
        idempotency_key: key.map(str::to_owned),
        retry_policy: policy(),
    }
}

pub(super) async fn enqueue(store: &SqliteStore, tenant: &Tenant, run_id: &str) -> Task {
    store
        .enqueue(tenant, new_task(run_id, None))
        .await
        .unwrap()
        .0
}

/// Moves a task's due time, as an operator or a test of time would.
fn set_next_attempt_at(db: &Db, id: &TaskId, when: SystemTime) {
    let micros = super::super::codec::to_micros(when);
    let changed = db
        .raw()
        .execute(
            "UPDATE tasks SET next_attempt_at = ?1 WHERE id = ?2",
            rusqlite::params![micros, id.as_str()],
        )
        .unwrap();
    assert_eq!(changed, 1);
}

/// `TaskQueue::list_tasks`, unwrapped.
pub(super) async fn list(
    store: &SqliteStore,
    tenant: &Tenant,
    state: Option<TaskState>,
    after: Option<&TaskId>,
    limit: usize,
) -> Vec<Task> {
    TaskQueue::list_tasks(store, tenant, state, after, limit)
        .await
        .unwrap()
}

fn ids(tasks: &[Task]) -> Vec<TaskId> {
    tasks.iter().map(|task| task.id.clone()).collect()
}

#[tokio::test]
async fn enqueue_with_a_known_idempotency_key_returns_the_existing_task() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let (first, existed) = store
        .enqueue(&t, new_task("run-1", Some("k")))
        .await
        .unwrap();
    assert!(!existed);
    assert_eq!(
        (first.state, first.attempt, first.attempts_used),
        (TaskState::Pending, 0, 0)
    );
    assert_eq!(first.retry_policy, policy());
    assert_eq!(first.idempotency_key.as_deref(), Some("k"));

    // Same key, different content: the first task wins and nothing new is stored.
    let (again, existed) = store
        .enqueue(&t, new_task("run-2", Some("k")))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(again, first);

    let (other, existed) = store
        .enqueue(&t, new_task("run-1", Some("k2")))
        .await
        .unwrap();
    assert!(!existed);
    assert_ne!(other.id, first.id);
    // Tasks without a key never collide.
    enqueue(&store, &t, "run-1").await;
    enqueue(&store, &t, "run-1").await;

    assert_eq!(list(&store, &t, None, None, 100).await.len(), 4);
    assert_eq!(store.get(&t, &first.id).await.unwrap(), Some(first));
}

#[tokio::test]
async fn claim_takes_due_tasks_only_oldest_due_first() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let later = enqueue(&store, &t, "run-later").await;
    let early = enqueue(&store, &t, "run-early").await;
    let future = enqueue(&store, &t, "run-future").await;
    set_next_attempt_at(&db, &later.id, at(5));
    set_next_attempt_at(&db, &early.id, at(1));
    set_next_attempt_at(&db, &future.id, at(1_000));

    let claimed = store.claim(&t, "w1", LEASE, 10, at(10)).await.unwrap();
    assert_eq!(ids(&claimed), vec![early.id.clone(), later.id.clone()]);
    for task in &claimed {
        assert_eq!(task.state, TaskState::Running);
        assert_eq!((task.attempt, task.attempts_used), (1, 1));
        assert_eq!(task.worker_id.as_deref(), Some("w1"));
        assert_eq!(task.lease_expires_at, Some(at(10) + LEASE));
        assert_eq!(task.updated_at, at(10));
        assert_eq!(store.get(&t, &task.id).await.unwrap().as_ref(), Some(task));
    }
    // Leased tasks and the future one are not claimable yet.
    assert!(
        store
            .claim(&t, "w2", LEASE, 10, at(20))
            .await
            .unwrap()
            .is_empty()
    );
    let untouched = store.get(&t, &future.id).await.unwrap().unwrap();
    assert_eq!(
        (untouched.state, untouched.attempt),
        (TaskState::Pending, 0)
    );

    let claimed = store
        .claim(&t, "w2", LEASE * 100, 10, at(1_000))
        .await
        .unwrap();
    assert_eq!(
        claimed.len(),
        3,
        "the future task is due and both leases have expired"
    );
}

#[tokio::test]
async fn claim_takes_at_most_the_batch_and_zero_takes_nothing() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    for n in 0..5 {
        enqueue(&store, &t, &format!("run-{n}")).await;
    }
    assert!(
        store
            .claim(&t, "w", LEASE, 0, at(0))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.claim(&t, "w", LEASE, 2, at(0)).await.unwrap().len(),
        2
    );
    assert_eq!(
        store.claim(&t, "w", LEASE, 10, at(0)).await.unwrap().len(),
        3
    );
}

#[tokio::test]
async fn a_stale_running_task_is_reclaimed_with_the_next_attempt() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    store.claim(&t, "w1", LEASE, 1, at(0)).await.unwrap();

    // Still leased one microsecond before expiry, claimable at it.
    let before_expiry = at(0) + LEASE - Duration::from_micros(1);
    assert!(
        store
            .claim(&t, "w2", LEASE, 1, before_expiry)
            .await
            .unwrap()
            .is_empty()
    );
    let reclaimed = store
        .claim(&t, "w2", LEASE, 1, at(0) + LEASE)
        .await
        .unwrap();
    assert_eq!(ids(&reclaimed), vec![task.id.clone()]);
    let reclaimed = &reclaimed[0];
    assert_eq!((reclaimed.attempt, reclaimed.attempts_used), (2, 2));
    assert_eq!(reclaimed.worker_id.as_deref(), Some("w2"));
    assert_eq!(reclaimed.lease_expires_at, Some(at(0) + LEASE + LEASE));
    assert!(reclaimed.last_error.as_deref().unwrap().contains("w1"));
    assert_eq!(
        store.get(&t, &task.id).await.unwrap().as_ref(),
        Some(reclaimed)
    );
}

#[tokio::test]
async fn a_stale_task_on_its_final_attempt_becomes_a_dead_letter_not_a_claim() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    let mut now = at(0);
    for _ in 0..policy().max_attempts {
        assert_eq!(store.claim(&t, "w", LEASE, 1, now).await.unwrap().len(), 1);
        now += LEASE;
    }
    assert!(
        store
            .claim(&t, "w", LEASE, 1, now)
            .await
            .unwrap()
            .is_empty()
    );
    let dead = store.get(&t, &task.id).await.unwrap().unwrap();
    assert_eq!(dead.state, TaskState::Dead);
    assert_eq!((dead.worker_id, dead.lease_expires_at), (None, None));
}

/// Every claimer has its own handle on the file (its own connections, like separate
/// processes) and two claimers share each handle, so both SQLite's lock and the in-process
/// mutex are in play.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claimers_never_take_the_same_task() {
    const TASKS: usize = 200;
    const CLAIMERS: usize = 8;
    let db = Db::new();
    let t = tenant("default");
    let store = db.open().await;
    for n in 0..TASKS {
        enqueue(&store, &t, &format!("run-{n}")).await;
    }
    let mut handles = Vec::new();
    for _ in 0..CLAIMERS / 2 {
        handles.push(Arc::new(db.open().await));
    }
    let claimers: Vec<_> = (0..CLAIMERS)
        .map(|n| {
            let store = Arc::clone(&handles[n % handles.len()]);
            let t = t.clone();
            tokio::spawn(async move {
                let worker = format!("w{n}");
                let mut mine = Vec::new();
                loop {
                    let batch = store.claim(&t, &worker, LEASE, 3, at(0)).await.unwrap();
                    if batch.is_empty() {
                        return mine;
                    }
                    assert!(
                        batch
                            .iter()
                            .all(|task| task.worker_id.as_deref() == Some(&worker))
                    );
                    mine.extend(batch.into_iter().map(|task| task.id));
                }
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for claimer in claimers {
        claimed.extend(claimer.await.unwrap());
    }
    assert_eq!(claimed.len(), TASKS, "each task claimed exactly once");
    assert_eq!(claimed.iter().collect::<HashSet<_>>().len(), TASKS);
    let stored = list(&store, &t, Some(TaskState::Running), None, 1_000).await;
    assert_eq!(stored.len(), TASKS);
    assert!(stored.iter().all(|task| task.attempt == 1));
}

#[tokio::test]
async fn two_tenants_never_see_each_others_tasks() {
    let db = Db::new();
    let store = db.open().await;
    let (a, b) = (tenant("tenant-a"), tenant("tenant-b"));
    let (task_a, _) = store
        .enqueue(&a, new_task("shared", Some("k")))
        .await
        .unwrap();
    // The same idempotency key in another tenant is another task.
    let (task_b, existed) = store
        .enqueue(&b, new_task("shared", Some("k")))
        .await
        .unwrap();
    assert!(!existed);
    assert_ne!(task_a.id, task_b.id);

    assert_eq!(store.get(&b, &task_a.id).await.unwrap(), None);
    assert_eq!(
        ids(&list(&store, &b, None, None, 10).await),
        vec![task_b.id.clone()]
    );
    let claimed = store.claim(&b, "w", LEASE, 10, at(0)).await.unwrap();
    assert_eq!(ids(&claimed), vec![task_b.id.clone()]);
    assert!(matches!(
        store
            .update(&b, &task_a.id, Transition::Cancel, at(0))
            .await,
        Err(Error::NotFound(_))
    ));
    assert_eq!(store.get(&a, &task_a.id).await.unwrap(), Some(task_a));
}

#[tokio::test]
async fn reopening_the_file_keeps_tasks_and_their_keys() {
    let db = Db::new();
    let t = tenant("default");
    let (claimed, keyed) = {
        let store = db.open().await;
        let (keyed, _) = store
            .enqueue(&t, new_task("run-1", Some("k")))
            .await
            .unwrap();
        let claimed = store.claim(&t, "w", LEASE, 1, at(0)).await.unwrap();
        (claimed[0].clone(), keyed)
    };
    let store = db.open().await;
    assert_eq!(
        store.get(&t, &claimed.id).await.unwrap(),
        Some(claimed.clone())
    );
    let (again, existed) = store
        .enqueue(&t, new_task("run-1", Some("k")))
        .await
        .unwrap();
    assert!(existed);
    assert_eq!(again.id, keyed.id);
    // The lease and its fence survive too.
    let done = store
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

#[tokio::test]
async fn list_pages_in_creation_order_and_filters_by_state() {
    let db = Db::new();
    let store = db.open().await;
    let t = tenant("default");
    let mut created = Vec::new();
    for n in 0..5 {
        created.push(enqueue(&store, &t, &format!("run-{n}")).await.id);
    }
    let first = list(&store, &t, None, None, 2).await;
    assert_eq!(ids(&first), created[..2]);
    let rest = list(&store, &t, None, Some(&created[1]), 10).await;
    assert_eq!(ids(&rest), created[2..]);
    assert!(list(&store, &t, None, None, 0).await.is_empty());

    store.claim(&t, "w", LEASE, 2, at(0)).await.unwrap();
    let running = list(&store, &t, Some(TaskState::Running), None, 10).await;
    assert_eq!(ids(&running), created[..2]);
    let pending = list(&store, &t, Some(TaskState::Pending), Some(&created[2]), 10).await;
    assert_eq!(ids(&pending), created[3..]);
}

#[tokio::test]
async fn a_version_1_database_gains_the_task_table_on_open() {
    let db = Db::new();
    let run = run("default", "run-1");
    db.open()
        .await
        .save(&checkpoint(&run, 1, 0, vec![message("user", "hi")]))
        .await
        .unwrap();
    // Back to what a binary without the queue (and without retention, which came later) left
    // behind.
    db.raw()
        .execute_batch(
            "DROP TABLE tasks; DROP TABLE checkpoint_pins; DROP INDEX runs_with_retention;
             ALTER TABLE runs DROP COLUMN retention;
             DELETE FROM checkpointd_migrations WHERE version >= 2;",
        )
        .unwrap();

    let store = db.open().await;
    let t = tenant("default");
    let task = enqueue(&store, &t, "run-1").await;
    assert_eq!(store.get(&t, &task.id).await.unwrap(), Some(task));
    assert_eq!(store.steps(&run).await.unwrap(), vec![Step::new(1)]);
}
