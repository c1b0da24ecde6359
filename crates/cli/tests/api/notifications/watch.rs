//! The watch streams: a decision reaches a watcher without polling, and a run's new
//! checkpoints reach a watcher of that run.

use std::time::Duration;

use checkpointd::proto::{ApproveRequest, WatchRunRequest, WatchRunResponse, WatchTasksRequest};

use super::{claimed, notifications, park};
use crate::support::{Backend, requests, spawn_app};

/// Long enough for any commit to reach a stream; only a failure waits this long.
const PATIENCE: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_watcher_sees_the_approval_request_and_the_decision_as_they_happen() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut watcher = notifications(app.channel().await).await;
    let mut stream = watcher
        .watch_tasks(WatchTasksRequest { after_sequence: 0 })
        .await
        .unwrap()
        .into_inner();
    let mut tasks = app.tasks().await;
    let task = claimed(&mut tasks, "watched", 3, Some(true)).await;
    park(&mut tasks, &task, "send_email").await;
    let requested = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("the request arrives")
        .unwrap()
        .unwrap();
    assert_eq!(requested.event_type, "task.input_required");
    assert_eq!(requested.task_id, task.task_id);
    tasks
        .approve(ApproveRequest {
            task_id: task.task_id.clone(),
            decided_by: "ops".into(),
            comment: String::new(),
        })
        .await
        .unwrap();
    let decided = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("the decision arrives")
        .unwrap()
        .unwrap();
    assert_eq!(decided.event_type, "task.approved");
    assert_eq!(decided.task_id, task.task_id);
    assert!(decided.sequence > requested.sequence);
    let body: serde_json::Value = serde_json::from_slice(&decided.payload).unwrap();
    assert_eq!(body["data"]["decided_by"], "ops");

    // A watcher that reconnects after the first event gets the rest, and nothing twice.
    let mut resumed = watcher
        .watch_tasks(WatchTasksRequest {
            after_sequence: requested.sequence,
        })
        .await
        .unwrap()
        .into_inner();
    let next = tokio::time::timeout(PATIENCE, resumed.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(next.event_id, decided.event_id);
}

#[tokio::test]
async fn a_run_watcher_sees_each_new_checkpoint_in_order() {
    let app = spawn_app(Backend::Memory).await;
    let mut client = app.client().await;
    client
        .save(requests::save("watched-run", 1, b"a"))
        .await
        .unwrap();
    let mut watcher = notifications(app.channel().await).await;
    let mut stream = watcher
        .watch_run(WatchRunRequest {
            run_id: "watched-run".into(),
            after_step: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(next_step(&mut stream).await, 1);
    client
        .save(requests::save("watched-run", 2, b"b"))
        .await
        .unwrap();
    assert_eq!(next_step(&mut stream).await, 2);
    client
        .save(requests::save("watched-run", 5, b"c"))
        .await
        .unwrap();
    assert_eq!(next_step(&mut stream).await, 5);
    let unknown = watcher
        .watch_run(WatchRunRequest {
            run_id: "never-saved".into(),
            after_step: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);
}

/// The step of the next checkpoint the watch tells of.
async fn next_step(stream: &mut tonic::Streaming<WatchRunResponse>) -> i64 {
    tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("a checkpoint arrives")
        .unwrap()
        .unwrap()
        .checkpoint
        .unwrap()
        .step
}
