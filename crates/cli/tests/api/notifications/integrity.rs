//! Corrupt data is told to the tenant's endpoints once per corrupt checkpoint, whoever finds it
//! first: Validate, a load's fallback past it, or a scrub (ValidateTenant).

use std::time::Duration;

use checkpointd::proto::notification_service_client::NotificationServiceClient;
use checkpointd::proto::{LoadLatestRequest, ValidateTenantRequest};
use tonic::transport::Channel;

use super::receiver::Receiver;
use super::{create_endpoint, deliveries, key_file, notifications, with_webhooks};
use crate::support::{Backend, TestApp, requests, spawn_app_with, validate_run, wait_until};

/// A server with webhooks on, a receiver registered as the default tenant's endpoint, and run
/// `run_id` saved at steps 1 and 2 with step 2 then corrupted on disk.
async fn corrupt_run(
    backend: Backend,
    run_id: &str,
) -> (
    TestApp,
    Receiver,
    NotificationServiceClient<Channel>,
    tempfile::TempDir,
) {
    let (dir, key) = key_file();
    let app = spawn_app_with(backend, with_webhooks(&key)).await;
    let receiver = Receiver::start(Duration::ZERO).await;
    let mut admin = notifications(app.channel().await).await;
    let (_, secret) = create_endpoint(&mut admin, &receiver.url()).await;
    receiver.expect_secret(&secret);
    let mut client = app.client().await;
    client
        .save(requests::save(run_id, 1, b"good"))
        .await
        .unwrap();
    client
        .save(requests::save(run_id, 2, b"soon bad"))
        .await
        .unwrap();
    app.corrupt_state(run_id, 2).await;
    (app, receiver, admin, dir)
}

/// Waits for the one corrupt-data event and checks it is signed and names `run_id` step 2.
async fn the_finding_arrives(receiver: &Receiver, run_id: &str) {
    wait_until("the finding arrived", || async {
        !receiver.arrivals().is_empty()
    })
    .await;
    let arrival = &receiver.arrivals()[0];
    assert!(arrival.verified);
    assert_eq!(arrival.body["type"], "integrity.corrupt");
    assert_eq!(arrival.body["data"]["run_id"], run_id);
    assert_eq!(arrival.body["data"]["step"], 2);
    assert_eq!(arrival.body["data"]["found_by"], "quarantine");
}

/// How many `integrity.corrupt` deliveries the outbox holds: written with the quarantine, so
/// exact as soon as the call that quarantined returned.
async fn corrupt_deliveries(admin: &mut NotificationServiceClient<Channel>) -> usize {
    deliveries(admin)
        .await
        .iter()
        .filter(|delivery| delivery.event_type == "integrity.corrupt")
        .count()
}

#[tokio::test]
async fn a_corrupt_checkpoint_found_by_validate_reaches_the_receiver() {
    let (app, receiver, mut admin, _dir) = corrupt_run(Backend::Sqlite, "rotting").await;
    let mut client = app.client().await;
    let verdicts = validate_run(&mut client, "rotting").await;
    assert!(verdicts[0].valid && !verdicts[1].valid);
    the_finding_arrives(&receiver, "rotting").await;
    // Validated again: quarantined already, told already.
    validate_run(&mut client, "rotting").await;
    assert_eq!(corrupt_deliveries(&mut admin).await, 1);
}

async fn a_load_falling_back_past_a_corrupt_checkpoint_tells_it_once(backend: Backend) {
    let (app, receiver, mut admin, _dir) = corrupt_run(backend, "falling").await;
    let mut client = app.client().await;
    for _ in 0..2 {
        let load = LoadLatestRequest {
            run_id: "falling".into(),
            ..LoadLatestRequest::default()
        };
        let loaded = client.load_latest(load).await.unwrap().into_inner();
        // The load's answer is the fallback past step 2, as without notifications.
        assert_eq!(loaded.checkpoint.unwrap().step, 1);
    }
    the_finding_arrives(&receiver, "falling").await;
    // Nor does a later Validate tell it again.
    validate_run(&mut client, "falling").await;
    assert_eq!(corrupt_deliveries(&mut admin).await, 1);
    assert_eq!(receiver.arrivals().len(), 1);
}

async fn a_scrub_pass_tells_each_corrupt_checkpoint_it_finds(backend: Backend) {
    let (app, receiver, mut admin, _dir) = corrupt_run(backend, "scrubbed").await;
    let mut client = app.client().await;
    let mut stream = client
        .validate_tenant(ValidateTenantRequest { page_size: 10 })
        .await
        .unwrap()
        .into_inner();
    let mut corrupt = 0;
    while let Some(item) = stream.message().await.unwrap() {
        corrupt += usize::from(!item.verdict.unwrap().valid);
    }
    assert_eq!(corrupt, 1);
    the_finding_arrives(&receiver, "scrubbed").await;
    assert_eq!(corrupt_deliveries(&mut admin).await, 1);
}

crate::for_each_durable_backend!(
    a_load_falling_back_past_a_corrupt_checkpoint_tells_it_once,
    a_scrub_pass_tells_each_corrupt_checkpoint_it_finds,
);
