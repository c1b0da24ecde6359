//! `checkpointd webhooks`: the real binary creates, lists and deletes endpoints and shows
//! deliveries with their status.

use std::time::Duration;

use super::receiver::Receiver;
use super::{claimed, key_file, park, with_webhooks};
use crate::support::{Backend, cli, spawn_app_with, stdout_of, wait_until};

// The binary blocks its caller's thread: the server needs another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_manages_endpoints_and_sees_deliveries_from_the_command_line() {
    let (_dir, key) = key_file();
    let app = spawn_app_with(Backend::Sqlite, with_webhooks(&key)).await;
    let receiver = Receiver::start(Duration::ZERO).await;
    let created: serde_json::Value = serde_json::from_str(&stdout_of(&cli(
        app.addr,
        &[
            "webhooks",
            "create",
            &receiver.url(),
            "--description",
            "ops",
            "--json",
        ],
    )))
    .unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    receiver.expect_secret(created["secret"].as_str().unwrap());
    let listed = stdout_of(&cli(app.addr, &["webhooks", "list"]));
    assert!(
        listed.contains(&id) && listed.contains(&receiver.url()),
        "{listed}"
    );
    assert!(!listed.contains("whsec_"), "a listing never shows a secret");

    let mut tasks = app.tasks().await;
    let task = claimed(&mut tasks, "cli-run", 3, Some(true)).await;
    park(&mut tasks, &task, "send_email").await;
    wait_until("the delivery is shown delivered", || async {
        let shown = stdout_of(&cli(
            app.addr,
            &["webhooks", "deliveries", "--status", "delivered", "--json"],
        ));
        let rows: serde_json::Value = serde_json::from_str(&shown).unwrap();
        rows.as_array()
            .is_some_and(|rows| rows.len() == 1 && rows[0]["event_type"] == "task.input_required")
    })
    .await;
    assert!(receiver.arrivals().iter().all(|a| a.verified));

    stdout_of(&cli(app.addr, &["webhooks", "delete", &id]));
    let listed = stdout_of(&cli(app.addr, &["webhooks", "list", "--json"]));
    assert_eq!(listed.trim(), "[]");
    let missing = cli(app.addr, &["webhooks", "delete", &id]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("NOT_FOUND"));
}
