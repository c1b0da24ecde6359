//! The task service's own rules: defaults applied at enqueue, the claim bound, approval pins
//! and the auto-resume setting.

use std::collections::BTreeMap;

use super::*;
use checkpointd_core::domain::{Attempt, Epoch};
use checkpointd_storage::queue::MemoryQueue;
use checkpointd_storage::store::{CheckpointStore, MemoryStore};

struct Fixture {
    store: Arc<MemoryStore>,
    tasks: TaskService,
    tenant: Tenant,
    run: RunKey,
}

/// A run with checkpoints at steps 1 and 2, and a task of it claimed at attempt 1.
async fn claimed_task() -> (Fixture, Task) {
    claimed_task_resuming(true, None).await
}

/// [`claimed_task`] on a server whose decisions resume tasks by default or not, enqueued
/// with `auto_resume_hitl` as given.
async fn claimed_task_resuming(
    server_default: bool,
    auto_resume_hitl: Option<bool>,
) -> (Fixture, Task) {
    let store = Arc::new(MemoryStore::new());
    let tasks = TaskService::new(
        Arc::new(MemoryQueue::new()),
        RetryPolicy::default(),
        Duration::from_secs(30),
    )
    .with_approval_pins(store.clone())
    .with_auto_resume_hitl(server_default);
    let tenant = Tenant::default_tenant();
    let run = RunKey::new(tenant.clone(), RunId::parse("run-1").unwrap());
    for step in 1..=2 {
        store
            .save(&checkpointd_core::domain::NewCheckpoint {
                run: run.clone(),
                step: checkpointd_core::domain::Step::new(step),
                content_type: "application/json".into(),
                state: b"{}".to_vec(),
                messages: Vec::new(),
                message_offset: 0,
                metadata: BTreeMap::new(),
                epoch: Epoch::new(0),
                client_checksum: None,
                tool_count: None,
                label: None,
            })
            .await
            .unwrap();
    }
    let request = EnqueueTask {
        run_id: run.run_id.clone(),
        input: Vec::new(),
        idempotency_key: None,
        retry_policy: None,
        auto_resume_hitl,
    };
    tasks.enqueue(&tenant, request).await.unwrap();
    let mut claimed = tasks
        .claim(&tenant, "worker", None, 1, SystemTime::now())
        .await
        .unwrap();
    let fixture = Fixture {
        store,
        tasks,
        tenant,
        run,
    };
    (fixture, claimed.remove(0))
}

impl Fixture {
    async fn pinned_steps(&self) -> Vec<u64> {
        let facts = self.store.retention_facts(&self.run).await.unwrap();
        facts
            .unwrap()
            .checkpoints
            .into_iter()
            .filter(|checkpoint| checkpoint.pinned())
            .map(|checkpoint| checkpoint.step.get())
            .collect()
    }

    async fn update(&self, task: &Task, transition: Transition) -> Result<Task> {
        self.tasks
            .update(&self.tenant, &task.id, transition, SystemTime::now())
            .await
    }
}

fn request_approval(attempt: Attempt) -> Transition {
    Transition::RequestApproval {
        attempt,
        action: "send the email".into(),
        details: Vec::new(),
    }
}

fn decide(approved: bool) -> Transition {
    Transition::Decide {
        approved,
        decided_by: "operator".into(),
        comment: String::new(),
    }
}

#[tokio::test]
async fn a_task_waiting_for_approval_pins_its_runs_latest_checkpoint() {
    let (fixture, task) = claimed_task().await;

    let waiting = fixture
        .update(&task, request_approval(task.attempt))
        .await
        .unwrap();

    assert_eq!(waiting.state, TaskState::InputRequired);
    assert_eq!(fixture.pinned_steps().await, vec![2]);
}

#[tokio::test]
async fn a_decision_either_way_gives_the_approval_pin_back() {
    for approved in [true, false] {
        let (fixture, task) = claimed_task().await;
        fixture
            .update(&task, request_approval(task.attempt))
            .await
            .unwrap();

        let decided = fixture.update(&task, decide(approved)).await.unwrap();

        assert_ne!(decided.state, TaskState::InputRequired);
        assert!(
            fixture.pinned_steps().await.is_empty(),
            "approved: {approved}"
        );
    }
}

#[tokio::test]
async fn a_task_parked_after_its_decision_keeps_its_pin_until_resumed() {
    let (fixture, task) = claimed_task_resuming(false, None).await;
    assert!(!task.auto_resume_hitl, "the server's default applies");
    fixture
        .update(&task, request_approval(task.attempt))
        .await
        .unwrap();

    let parked = fixture.update(&task, decide(true)).await.unwrap();
    assert_eq!(parked.state, TaskState::InputRequired);
    assert_eq!(fixture.pinned_steps().await, vec![2]);

    let resumed = fixture.update(&task, Transition::ResumeTask).await.unwrap();
    assert_eq!(resumed.state, TaskState::Pending);
    assert!(fixture.pinned_steps().await.is_empty());
}

#[tokio::test]
async fn an_enqueue_that_says_whether_to_auto_resume_overrides_the_servers_default() {
    for (server_default, asked) in [(true, false), (false, true)] {
        let (_, task) = claimed_task_resuming(server_default, Some(asked)).await;
        assert_eq!(task.auto_resume_hitl, asked);
    }
}

#[tokio::test]
async fn cancelling_a_waiting_task_gives_its_pin_back() {
    let (fixture, task) = claimed_task().await;
    fixture
        .update(&task, request_approval(task.attempt))
        .await
        .unwrap();

    let cancelled = fixture.update(&task, Transition::Cancel).await.unwrap();

    assert_eq!(cancelled.state, TaskState::Cancelled);
    assert!(fixture.pinned_steps().await.is_empty());
}

#[tokio::test]
async fn an_approval_request_the_queue_refuses_takes_its_pin_back() {
    let (fixture, task) = claimed_task().await;

    let stale = fixture
        .update(&task, request_approval(task.attempt.next()))
        .await;

    assert!(matches!(stale, Err(Error::LeaseLost(_))), "{stale:?}");
    assert!(fixture.pinned_steps().await.is_empty());
}

#[tokio::test]
async fn a_refused_retry_of_an_approval_request_keeps_the_waiting_tasks_pin() {
    let (fixture, task) = claimed_task().await;
    fixture
        .update(&task, request_approval(task.attempt))
        .await
        .unwrap();

    let retried = fixture.update(&task, request_approval(task.attempt)).await;

    assert!(retried.is_err(), "{retried:?}");
    assert_eq!(fixture.pinned_steps().await, vec![2]);
}

#[tokio::test]
async fn other_pins_on_the_run_outlive_an_approval() {
    let (fixture, task) = claimed_task().await;
    let operator = checkpointd_core::retention::OPERATOR_PIN;
    let step = Some(checkpointd_core::domain::Step::new(2));
    fixture
        .store
        .pin(&fixture.run, step, operator)
        .await
        .unwrap();
    fixture
        .update(&task, request_approval(task.attempt))
        .await
        .unwrap();

    fixture.update(&task, decide(true)).await.unwrap();

    assert_eq!(fixture.pinned_steps().await, vec![2]);
}

#[test]
fn retry_overrides_fill_only_what_they_set_and_refuse_an_unusable_policy() {
    let defaults = RetryPolicy::default();
    let overrides = RetryOverrides {
        max_attempts: Some(9),
        ..RetryOverrides::default()
    };
    let policy = overrides.over(&defaults).unwrap();
    assert_eq!(policy.max_attempts, 9);
    assert_eq!(policy.initial_delay, defaults.initial_delay);
    let unusable = RetryOverrides {
        jitter: Some(2.0),
        ..RetryOverrides::default()
    };
    assert!(matches!(
        unusable.over(&defaults),
        Err(Error::InvalidArgument(_))
    ));
}
