//! Webhook delivery end to end: signed, at least once, once per id, surviving a receiver
//! outage and a `kill -9`, and never on the path of the RPC that caused the event.

use std::collections::BTreeSet;
use std::time::Duration;

use checkpointd::proto::{
    ApproveRequest, DeliveryStatus, ErrorClass, FailRequest, RejectRequest, ResumeTaskRequest,
};

use super::receiver::Receiver;
use super::{claimed, create_endpoint, deliveries, key_file, notifications, park, with_webhooks};
use crate::support::{
    Backend, ServerProcess, channel, requests, serve_on, spawn_app_with, wait_until,
};

fn approve(task_id: &str) -> ApproveRequest {
    ApproveRequest {
        task_id: task_id.into(),
        decided_by: "ops".into(),
        comment: "go".into(),
    }
}

#[tokio::test]
async fn every_event_reaches_the_receiver_signed_with_the_endpoints_secret() {
    let (_dir, key) = key_file();
    let app = spawn_app_with(Backend::Sqlite, with_webhooks(&key)).await;
    let receiver = Receiver::start(Duration::ZERO).await;
    let mut admin = notifications(app.channel().await).await;
    let (_, secret) = create_endpoint(&mut admin, &receiver.url()).await;
    receiver.expect_secret(&secret);
    let mut tasks = app.tasks().await;

    // Approval requested, approved (and left parked, so the next claim takes the next task).
    let first = claimed(&mut tasks, "run-approve", 3, Some(false)).await;
    park(&mut tasks, &first, "send_email").await;
    tasks.approve(approve(&first.task_id)).await.unwrap();
    // A call in doubt, rejected, parked until resumed (below).
    let second = claimed(&mut tasks, "run-doubt", 3, Some(false)).await;
    park(&mut tasks, &second, "in_doubt 3:charge:0").await;
    tasks
        .reject(RejectRequest {
            task_id: second.task_id.clone(),
            decided_by: "ops".into(),
            comment: "no".into(),
        })
        .await
        .unwrap();
    // Dead: its only attempt failed.
    let third = claimed(&mut tasks, "run-dead", 1, None).await;
    tasks
        .fail(FailRequest {
            task_id: third.task_id.clone(),
            attempt: third.attempt,
            error: "tool exploded".into(),
            error_class: ErrorClass::Transient.into(),
        })
        .await
        .unwrap();
    // The rejected call in doubt runs again (after the last claim, which it would take).
    tasks
        .resume_task(ResumeTaskRequest {
            task_id: second.task_id.clone(),
        })
        .await
        .unwrap();

    wait_until("all six events arrived", || async {
        receiver.ids().len() == 6
    })
    .await;
    let arrivals = receiver.arrivals();
    assert!(
        arrivals.iter().all(|a| a.verified),
        "every request carries a valid Standard Webhooks signature: {arrivals:?}"
    );
    let seen: Vec<(String, String, String)> = arrivals
        .iter()
        .map(|a| {
            let data = &a.body["data"];
            (
                a.body["type"].as_str().unwrap().to_owned(),
                data["task_id"].as_str().unwrap().to_owned(),
                data["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for expected in [
        ("task.input_required", &first.task_id, "approval_requested"),
        ("task.approved", &first.task_id, ""),
        ("task.input_required", &second.task_id, "in_doubt"),
        ("task.rejected", &second.task_id, ""),
        ("task.resumed", &second.task_id, ""),
        ("task.dead", &third.task_id, ""),
    ] {
        let expected = (
            expected.0.to_owned(),
            expected.1.clone(),
            expected.2.to_owned(),
        );
        assert!(seen.contains(&expected), "{expected:?} not in {seen:?}");
    }
    // The API shows every delivery as delivered once the receiver answered.
    wait_until("every delivery is marked delivered", || async {
        let listed = deliveries(&mut admin.clone()).await;
        listed.len() == 6
            && listed
                .iter()
                .all(|d| d.status() == DeliveryStatus::Delivered && d.attempts == 1)
    })
    .await;
}

#[tokio::test]
async fn a_receiver_that_was_down_gets_every_event_once_per_id_when_it_comes_back() {
    let (_dir, key) = key_file();
    let app = spawn_app_with(Backend::Postgres, with_webhooks(&key)).await;
    let mut receiver = Receiver::reserve(Duration::ZERO).await;
    let mut admin = notifications(app.channel().await).await;
    let (_, secret) = create_endpoint(&mut admin, &receiver.url()).await;
    receiver.expect_secret(&secret);
    let mut tasks = app.tasks().await;
    let mut raised = BTreeSet::new();
    for run in ["down-1", "down-2", "down-3"] {
        let task = claimed(&mut tasks, run, 3, Some(true)).await;
        park(&mut tasks, &task, "deploy").await;
        raised.insert(task.task_id);
    }
    wait_until("every delivery failed once", || async {
        let listed = deliveries(&mut admin.clone()).await;
        listed.len() == 3
            && listed
                .iter()
                .all(|d| d.status() == DeliveryStatus::Failing && d.last_error.contains("connect"))
    })
    .await;
    receiver.listen().await;
    wait_until("the retries arrived", || async {
        deliveries(&mut admin.clone())
            .await
            .iter()
            .all(|d| d.status() == DeliveryStatus::Delivered)
    })
    .await;
    let arrivals = receiver.arrivals();
    assert!(arrivals.iter().all(|a| a.verified));
    let tasks_seen: BTreeSet<String> = arrivals
        .iter()
        .map(|a| a.body["data"]["task_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tasks_seen, raised);
    // At least once, and a repeat is only ever the same event under the same id.
    assert_eq!(receiver.ids().len(), 3);
    for arrival in &arrivals {
        assert!(
            arrivals
                .iter()
                .filter(|other| other.id == arrival.id)
                .all(|other| other.body == arrival.body)
        );
    }
}

#[tokio::test]
async fn an_event_committed_before_a_kill_9_is_delivered_after_the_restart() {
    let (_dir, key) = key_file();
    let db = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", db.path().join("checkpointd.db").display());
    let key_flag = key.to_str().unwrap();
    let mut receiver = Receiver::reserve(Duration::ZERO).await;
    let mut server = ServerProcess::start(&url, &["--webhook-key-file", key_flag]);
    let mut admin = notifications(channel(server.addr).await).await;
    let (_, secret) = create_endpoint(&mut admin, &receiver.url()).await;
    receiver.expect_secret(&secret);
    let mut tasks =
        checkpointd::proto::task_service_client::TaskServiceClient::new(channel(server.addr).await);
    let task = claimed(&mut tasks, "crashy", 3, Some(true)).await;
    park(&mut tasks, &task, "wire_money").await;
    // The receiver is down, so the event cannot have been delivered; then the server dies
    // without any shutdown code.
    server.kill9();
    receiver.listen().await;
    let restarted = ServerProcess::start(&url, &["--webhook-key-file", key_flag]);
    wait_until("the event arrived after the restart", || async {
        !receiver.arrivals().is_empty()
    })
    .await;
    let arrival = &receiver.arrivals()[0];
    assert!(arrival.verified);
    assert_eq!(arrival.body["type"], "task.input_required");
    assert_eq!(arrival.body["data"]["task_id"], task.task_id.as_str());
    drop(restarted);
}

#[tokio::test]
async fn a_slow_receiver_never_holds_up_a_save_or_an_approve() {
    let (_dir, key) = key_file();
    let app = serve_on("memory://", with_webhooks(&key)).await;
    // Answers each request only after five seconds.
    let receiver = Receiver::start(Duration::from_secs(5)).await;
    let mut admin = notifications(app.channel().await).await;
    let (_, secret) = create_endpoint(&mut admin, &receiver.url()).await;
    receiver.expect_secret(&secret);
    let mut tasks = app.tasks().await;
    let task = claimed(&mut tasks, "slow", 3, Some(true)).await;
    park(&mut tasks, &task, "send_email").await;
    wait_until("the receiver is busy with the first event", || async {
        !receiver.arrivals().is_empty()
    })
    .await;
    // Both calls return while the receiver still sits on the request it got.
    tasks.approve(approve(&task.task_id)).await.unwrap();
    let mut checkpoints = app.client().await;
    checkpoints
        .save(requests::save("slow", 1, b"state"))
        .await
        .unwrap();
    assert_eq!(
        receiver.answered(),
        0,
        "the receiver had answered nothing when Approve and Save returned"
    );
    // And the decision is delivered too, in its turn.
    wait_until("the approval reached the receiver", || async {
        receiver.arrivals().len() == 2
    })
    .await;
    assert!(receiver.arrivals().iter().all(|a| a.verified));
}
