//! The task queue over gRPC: fencing on the attempt, backoff on stored timestamps, dead letters,
//! approvals, and exact codes for bad input. Lease expiry is simulated by rewriting timestamps.

use std::time::{Duration, SystemTime};

use checkpointd::proto::{
    ApproveRequest, CancelRequest, ClaimRequest, CompleteRequest, EnqueueRequest, ErrorClass,
    FailRequest, GetRequest, HeartbeatRequest, ListRequest, LoadLatestRequest, RejectRequest,
    RequestApprovalRequest, RequeueRequest, ResumeRequest, RetryPolicy, SaveRequest, Task,
    TaskState,
};
use tonic::Code;

use crate::support::requests::save;
use crate::support::{Backend, TestApp, spawn_app};

fn lease(seconds: i64) -> Option<prost_types::Duration> {
    Some(prost_types::Duration { seconds, nanos: 0 })
}

fn at(timestamp: &Option<prost_types::Timestamp>) -> SystemTime {
    SystemTime::try_from(timestamp.expect("timestamp set")).unwrap()
}

async fn enqueue(app: &TestApp, run_id: &str, policy: Option<RetryPolicy>) -> Task {
    app.tasks()
        .await
        .enqueue(EnqueueRequest {
            run_id: run_id.into(),
            retry_policy: policy,
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

async fn claim_one(app: &TestApp, worker: &str) -> Task {
    let mut tasks = app
        .tasks()
        .await
        .claim(ClaimRequest {
            worker_id: worker.into(),
            lease_duration: lease(60),
            batch_size: 1,
        })
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(tasks.len(), 1, "{worker} expected to claim one task");
    tasks.remove(0)
}

async fn get(app: &TestApp, task_id: &str) -> Task {
    app.tasks()
        .await
        .get(GetRequest {
            task_id: task_id.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

async fn a_zombie_worker_is_fenced_on_complete_and_save(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut checkpoints = app.client().await;
    let task = enqueue(&app, "run-z", None).await;
    let a = claim_one(&app, "worker-a").await;
    assert_eq!(a.attempt, 1);
    let epoch_a = checkpoints
        .resume(ResumeRequest {
            run_id: "run-z".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .epoch;
    checkpoints
        .save(SaveRequest {
            epoch: Some(epoch_a),
            ..save("run-z", 1, b"a")
        })
        .await
        .unwrap();

    // Worker A stalls; its lease runs out and worker B takes over.
    app.expire_lease(&task.task_id).await;
    let b = claim_one(&app, "worker-b").await;
    assert_eq!((b.task_id.as_str(), b.attempt), (task.task_id.as_str(), 2));
    let epoch_b = checkpoints
        .resume(ResumeRequest {
            run_id: "run-z".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .epoch;
    assert!(epoch_b > epoch_a);

    let mut tasks = app.tasks().await;
    let complete = tasks
        .complete(CompleteRequest {
            task_id: task.task_id.clone(),
            attempt: 1,
            result: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(complete.code(), Code::FailedPrecondition, "{complete:?}");
    let heartbeat = tasks
        .heartbeat(HeartbeatRequest {
            task_id: task.task_id.clone(),
            attempt: 1,
            lease_duration: lease(60),
        })
        .await
        .unwrap_err();
    assert_eq!(heartbeat.code(), Code::FailedPrecondition);
    let zombie_save = checkpoints
        .save(SaveRequest {
            epoch: Some(epoch_a),
            ..save("run-z", 2, b"zombie")
        })
        .await
        .unwrap_err();
    assert_eq!(zombie_save.code(), Code::FailedPrecondition);

    let now = get(&app, &task.task_id).await;
    assert_eq!(now.state, TaskState::Running as i32);
    assert_eq!((now.attempt, now.worker_id.as_str()), (2, "worker-b"));
    let latest = checkpoints
        .load_latest(LoadLatestRequest {
            run_id: "run-z".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(latest.state, b"a");
    tasks
        .complete(CompleteRequest {
            task_id: task.task_id.clone(),
            attempt: 2,
            result: b"done".to_vec(),
        })
        .await
        .unwrap();
}

async fn backoff_follows_the_stored_policy_until_the_task_is_dead(backend: Backend) {
    let app = spawn_app(backend).await;
    let policy = RetryPolicy {
        initial_delay: Some(prost_types::Duration {
            seconds: 10,
            nanos: 0,
        }),
        multiplier: 3.0,
        max_delay: Some(prost_types::Duration {
            seconds: 60,
            nanos: 0,
        }),
        jitter: Some(0.0),
        max_attempts: 3,
    };
    let task = enqueue(&app, "run-b", Some(policy)).await;
    let mut tasks = app.tasks().await;
    for expected in [10, 30] {
        let claimed = claim_one(&app, "w").await;
        let failed = tasks
            .fail(FailRequest {
                task_id: task.task_id.clone(),
                attempt: claimed.attempt,
                error: "model timeout".into(),
                error_class: ErrorClass::Transient as i32,
            })
            .await
            .unwrap()
            .into_inner()
            .task
            .unwrap();
        assert_eq!(failed.state, TaskState::Pending as i32);
        let stored = get(&app, &task.task_id).await;
        let delay = at(&stored.next_attempt_at)
            .duration_since(at(&stored.updated_at))
            .unwrap();
        assert_eq!(
            delay,
            Duration::from_secs(expected),
            "after attempt {}",
            claimed.attempt
        );
        // Not due yet: nothing to claim until the delay has passed.
        let early = tasks
            .claim(ClaimRequest {
                worker_id: "w".into(),
                lease_duration: lease(60),
                batch_size: 5,
            })
            .await
            .unwrap()
            .into_inner()
            .tasks;
        assert!(early.is_empty());
        app.make_due(&task.task_id).await;
    }
    let last = claim_one(&app, "w").await;
    let dead = tasks
        .fail(FailRequest {
            task_id: task.task_id.clone(),
            attempt: last.attempt,
            error: "model timeout".into(),
            error_class: ErrorClass::Transient as i32,
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(dead.state, TaskState::Dead as i32);
    assert_eq!(dead.attempts_used, 3);
    assert_eq!(dead.last_error, "model timeout");
    let listed = tasks
        .list(ListRequest {
            state: TaskState::Dead as i32,
            ..ListRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(listed.len(), 1);

    let revived = tasks
        .requeue(RequeueRequest {
            task_id: task.task_id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(
        (revived.state, revived.attempts_used),
        (TaskState::Pending as i32, 0)
    );
    assert_eq!(claim_one(&app, "w").await.attempt, 4);
}

async fn a_fatal_failure_fails_the_task_after_one_attempt(backend: Backend) {
    let app = spawn_app(backend).await;
    let task = enqueue(&app, "run-f", None).await;
    let claimed = claim_one(&app, "w").await;
    let failed = app
        .tasks()
        .await
        .fail(FailRequest {
            task_id: task.task_id.clone(),
            attempt: claimed.attempt,
            error: "invalid credentials".into(),
            error_class: ErrorClass::Fatal as i32,
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(
        (failed.state, failed.attempts_used),
        (TaskState::Failed as i32, 1)
    );
    let nothing = app
        .tasks()
        .await
        .claim(ClaimRequest {
            worker_id: "w".into(),
            lease_duration: lease(60),
            batch_size: 5,
        })
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert!(nothing.is_empty());
}

async fn approvals_park_the_task_and_record_the_decision(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut tasks = app.tasks().await;
    let task = enqueue(&app, "run-h", None).await;
    let claimed = claim_one(&app, "w").await;
    let parked = tasks
        .request_approval(RequestApprovalRequest {
            task_id: task.task_id.clone(),
            attempt: claimed.attempt,
            action: "send_email".into(),
            details: b"{\"to\":\"ceo\"}".to_vec(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(parked.state, TaskState::InputRequired as i32);
    assert!(parked.worker_id.is_empty());
    assert_eq!(
        parked.attempts_used, 0,
        "waiting for a human is not a failed run"
    );

    let approved = tasks
        .approve(ApproveRequest {
            task_id: task.task_id.clone(),
            decided_by: "alice".into(),
            comment: "ok".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(approved.state, TaskState::Pending as i32);
    let approval = approved.approval.unwrap();
    assert!(approval.decided && approval.approved);
    assert_eq!(
        (approval.decided_by.as_str(), approval.action.as_str()),
        ("alice", "send_email")
    );
    let again = tasks
        .reject(RejectRequest {
            task_id: task.task_id.clone(),
            decided_by: "bob".into(),
            comment: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition);
    let resumed = claim_one(&app, "w").await;
    assert!(resumed.approval.unwrap().approved);
}

async fn bad_task_requests_get_exact_codes(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut tasks = app.tasks().await;
    let task = enqueue(&app, "run-x", None).await;
    let unknown = "01a1fc69-5cea-730f-a85d-1958a5a35681".to_owned();
    let cases: Vec<(&str, Result<(), tonic::Status>, Code)> = vec![
        (
            "get an unknown task",
            tasks
                .get(GetRequest {
                    task_id: unknown.clone(),
                })
                .await
                .map(drop),
            Code::NotFound,
        ),
        (
            "get a malformed id",
            tasks
                .get(GetRequest {
                    task_id: "nope".into(),
                })
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
        (
            "complete with an attempt never claimed",
            tasks
                .complete(CompleteRequest {
                    task_id: task.task_id.clone(),
                    attempt: 7,
                    result: vec![],
                })
                .await
                .map(drop),
            Code::FailedPrecondition,
        ),
        (
            "approve a task that is not waiting",
            tasks
                .approve(ApproveRequest {
                    task_id: task.task_id.clone(),
                    decided_by: "a".into(),
                    comment: String::new(),
                })
                .await
                .map(drop),
            Code::FailedPrecondition,
        ),
        (
            "approve without a name",
            tasks
                .approve(ApproveRequest {
                    task_id: task.task_id.clone(),
                    decided_by: String::new(),
                    comment: String::new(),
                })
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
        (
            "negative lease",
            tasks
                .claim(ClaimRequest {
                    worker_id: "w".into(),
                    lease_duration: Some(prost_types::Duration {
                        seconds: -5,
                        nanos: 0,
                    }),
                    batch_size: 1,
                })
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
        (
            "absurd lease",
            tasks
                .claim(ClaimRequest {
                    worker_id: "w".into(),
                    lease_duration: lease(i64::MAX / 2),
                    batch_size: 1,
                })
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
        (
            "claim without a worker id",
            tasks
                .claim(ClaimRequest {
                    worker_id: String::new(),
                    lease_duration: lease(5),
                    batch_size: 1,
                })
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
        (
            "batch too large",
            tasks
                .claim(ClaimRequest {
                    worker_id: "w".into(),
                    lease_duration: lease(5),
                    batch_size: 5000,
                })
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
        (
            "requeue a pending task",
            tasks
                .requeue(RequeueRequest {
                    task_id: task.task_id.clone(),
                })
                .await
                .map(drop),
            Code::FailedPrecondition,
        ),
        (
            "enqueue without a run",
            tasks.enqueue(EnqueueRequest::default()).await.map(drop),
            Code::InvalidArgument,
        ),
        (
            "enqueue with a shrinking multiplier",
            tasks
                .enqueue(EnqueueRequest {
                    run_id: "r".into(),
                    retry_policy: Some(RetryPolicy {
                        multiplier: 0.5,
                        ..RetryPolicy::default()
                    }),
                    ..EnqueueRequest::default()
                })
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
    ];
    for (name, outcome, code) in cases {
        let status = outcome.expect_err(name);
        assert_eq!(status.code(), code, "{name}: {status:?}");
    }
    // Nothing above changed the task, and the server still answers.
    let unchanged = get(&app, &task.task_id).await;
    assert_eq!(
        (unchanged.state, unchanged.attempt),
        (TaskState::Pending as i32, 0)
    );
    tasks
        .cancel(CancelRequest {
            task_id: task.task_id.clone(),
        })
        .await
        .unwrap();
    let cancelled = get(&app, &task.task_id).await;
    assert_eq!(cancelled.state, TaskState::Cancelled as i32);
}

crate::for_each_durable_backend!(
    a_zombie_worker_is_fenced_on_complete_and_save,
    backoff_follows_the_stored_policy_until_the_task_is_dead,
    a_fatal_failure_fails_the_task_after_one_attempt,
    approvals_park_the_task_and_record_the_decision,
    bad_task_requests_get_exact_codes,
);
