//! The console's run pages and repairs over real HTTP: the message log paged and runs found by
//! prefix; settling a call in doubt records the operator as the actor; a tenant verification
//! shows a corrupted checkpoint as corrupt and quarantined.

use std::time::Duration;

use checkpointd::proto::RecordToolIntentRequest;
use checkpointd_core::domain::Role;

use super::http::{get, post};
use super::{console, console_app, console_app_on, session};
use crate::auth::{bearer, make_key, save_as};
use crate::support::Backend;
use crate::support::requests::{message, save};

#[tokio::test]
async fn a_long_message_log_is_paged_and_runs_are_found_by_prefix() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let mut request = save("chat-1", 1, b"{}");
    request.messages = (1..=60)
        .map(|n| message("user", &format!("message number {n}")))
        .collect();
    let mut client = app.client().await;
    client
        .save(bearer(Some(&agent), None, request))
        .await
        .unwrap();
    save_as(&app, &agent, None, "other-1", 1).await.unwrap();
    let cookie = session(&app, &operator).await;

    let first = get(console(&app), "/runs/chat-1", Some(&cookie)).await;
    assert!(first.body.contains("message number 50<"), "{}", first.body);
    assert!(!first.body.contains("message number 51<"));
    assert!(first.body.contains("?messages=50#messages"));
    let second = get(console(&app), "/runs/chat-1?messages=50", Some(&cookie)).await;
    assert!(second.body.contains(r#"<ol start="51">"#));
    assert!(
        second.body.contains("message number 60<") && !second.body.contains("message number 50<")
    );
    assert!(second.body.contains("?messages=0#messages"), "a link back");

    let found = get(console(&app), "/runs?prefix=chat", Some(&cookie)).await;
    assert!(found.body.contains("chat-1") && !found.body.contains("other-1"));
}

#[tokio::test]
async fn a_call_in_doubt_is_marked_done_in_the_console_with_the_operator_recorded() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (operator_id, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    save_as(&app, &agent, None, "run-doubt", 1).await.unwrap();
    let intent = RecordToolIntentRequest {
        run_id: "run-doubt".into(),
        call_id: "step-2/send_email/0".into(),
        tool_name: "send_email".into(),
        step: 2,
        epoch: None,
        arguments_digest: String::new(),
    };
    let mut client = app.client().await;
    client
        .record_tool_intent(bearer(Some(&agent), None, intent))
        .await
        .unwrap();
    let cookie = session(&app, &operator).await;
    let page = get(console(&app), "/runs/run-doubt", Some(&cookie)).await;
    assert!(
        page.body.contains("in doubt (intent without a result)"),
        "{}",
        page.body
    );

    let fields = [
        ("csrf", page.csrf()),
        ("call_id", "step-2/send_email/0".to_owned()),
        ("action", "mark_done".to_owned()),
        ("output", r#"{"sent":true}"#.to_owned()),
    ];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let reply = post(
        console(&app),
        "/runs/run-doubt/repair",
        Some(&cookie),
        &fields,
    )
    .await;
    assert_eq!(reply.status, 303, "{reply:?}");

    let journal = client
        .get_journal(bearer(
            Some(&operator),
            None,
            checkpointd::proto::GetJournalRequest {
                run_id: "run-doubt".into(),
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(journal.in_doubt.is_empty());
    let action = journal.actions.last().expect("the repair is recorded");
    assert_eq!(action.actor, format!("key:{operator_id}"));
    let page = get(console(&app), "/runs/run-doubt", Some(&cookie)).await;
    assert!(page.body.contains("Repairs made"));
    assert!(page.body.contains(&format!("key:{operator_id}")));
    assert!(!page.body.contains("in doubt (intent without a result)"));
}

#[tokio::test]
async fn a_tenant_verification_shows_a_corrupt_checkpoint_as_corrupt_and_quarantined() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("console.db");
    let mut app = console_app_on(
        &format!("sqlite://{}", path.display()),
        Duration::from_secs(900),
    )
    .await;
    app.backend = Backend::Sqlite;
    app.sqlite_path = Some(path);
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    for step in 1..=3 {
        save_as(&app, &agent, None, "run-scrubbed", step)
            .await
            .unwrap();
    }
    app.corrupt_state("run-scrubbed", 2).await;
    let cookie = session(&app, &operator).await;
    let page = get(console(&app), "/integrity", Some(&cookie)).await;
    // Only a POST with the session's token runs it.
    assert_eq!(
        post(console(&app), "/integrity", Some(&cookie), &[])
            .await
            .status,
        403
    );
    let token = page.csrf();
    let result = post(
        console(&app),
        "/integrity",
        Some(&cookie),
        &[("csrf", &token)],
    )
    .await;
    assert_eq!(result.status, 200, "{}", result.body);
    assert!(
        result.body.contains("3 checkpoint(s) checked"),
        "{}",
        result.body
    );
    assert!(
        result
            .body
            .contains("<td>2</td><td><span class=\"status-bad\">CORRUPT</span></td>")
    );
    assert!(result.body.contains("<td>quarantined</td>"));

    let run = get(console(&app), "/runs/run-scrubbed", Some(&cookie)).await;
    assert_eq!(run.body.matches(">valid<").count(), 2, "{}", run.body);
    assert_eq!(run.body.matches(">CORRUPT<").count(), 1);
}
