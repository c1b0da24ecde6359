//! Corrupt data found by a verification is told to the tenant's endpoints.

use std::time::Duration;

use super::receiver::Receiver;
use super::{create_endpoint, key_file, notifications, with_webhooks};
use crate::support::{Backend, requests, spawn_app_with, validate_run, wait_until};

#[tokio::test]
async fn a_corrupt_checkpoint_found_by_validate_reaches_the_receiver() {
    let (_dir, key) = key_file();
    let app = spawn_app_with(Backend::Sqlite, with_webhooks(&key)).await;
    let receiver = Receiver::start(Duration::ZERO).await;
    let mut admin = notifications(app.channel().await).await;
    let (_, secret) = create_endpoint(&mut admin, &receiver.url()).await;
    receiver.expect_secret(&secret);
    let mut client = app.client().await;
    client
        .save(requests::save("rotting", 1, b"good"))
        .await
        .unwrap();
    client
        .save(requests::save("rotting", 2, b"soon bad"))
        .await
        .unwrap();
    app.corrupt_state("rotting", 2).await;
    let verdicts = validate_run(&mut client, "rotting").await;
    assert!(verdicts[0].valid && !verdicts[1].valid);
    wait_until("the finding arrived", || async {
        !receiver.arrivals().is_empty()
    })
    .await;
    let arrival = &receiver.arrivals()[0];
    assert!(arrival.verified);
    assert_eq!(arrival.body["type"], "integrity.corrupt");
    assert_eq!(arrival.body["data"]["run_id"], "rotting");
    assert_eq!(arrival.body["data"]["step"], 2);
    assert_eq!(arrival.body["data"]["found_by"], "validate");
    assert_eq!(
        receiver.arrivals().len(),
        1,
        "the intact checkpoint raised nothing"
    );
}
