//! The integrity page and the journal labels over real HTTP on SQLite with bytes flipped in the
//! database: checkpoints quarantined before anyone opens the page are listed on arrival (this
//! tenant's only), with the reason in words and the repair command; a call whose journalled
//! result is corrupt is called a corrupt result, not a corrupt intent.

use std::time::Duration;

use checkpointd::proto::{LoadLatestRequest, RecordToolIntentRequest};
use checkpointd_core::domain::Role;

use super::http::get;
use super::{console, console_app_on, session};
use crate::auth::{bearer, make_key, save_as};
use crate::support::requests::tool;
use crate::support::{Backend, TestApp};

/// A console over a SQLite file the test can corrupt.
async fn sqlite_console(dir: &tempfile::TempDir) -> TestApp {
    let path = dir.path().join("console.db");
    let mut app = console_app_on(
        &format!("sqlite://{}", path.display()),
        Duration::from_secs(900),
    )
    .await;
    app.backend = Backend::Sqlite;
    app.sqlite_path = Some(path);
    app
}

/// Reads the run's latest checkpoint as `token`, which quarantines the corrupt newest ones.
async fn load_latest(app: &TestApp, token: &str, tenant: Option<&str>, run_id: &str) {
    let request = LoadLatestRequest {
        run_id: run_id.to_owned(),
        ..Default::default()
    };
    app.client()
        .await
        .load_latest(bearer(Some(token), tenant, request))
        .await
        .expect("an older checkpoint is valid");
}

#[tokio::test]
async fn checkpoints_quarantined_earlier_are_listed_on_arrival_with_reason_and_repair() {
    let dir = tempfile::tempdir().unwrap();
    let app = sqlite_console(&dir).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let (_, stranger) = make_key(&app, Some("globex"), Role::Agent).await;
    for step in 1..=3 {
        save_as(&app, &agent, None, "run-hit", step).await.unwrap();
        save_as(&app, &stranger, None, "run-theirs", step)
            .await
            .unwrap();
    }
    save_as(&app, &agent, None, "run-fine", 1).await.unwrap();
    for step in [2, 3] {
        app.corrupt_state("run-hit", step).await;
        app.corrupt_state("run-theirs", step).await;
    }
    load_latest(&app, &agent, None, "run-hit").await;
    load_latest(&app, &stranger, None, "run-theirs").await;

    let cookie = session(&app, &operator).await;
    let page = get(console(&app), "/integrity", Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("2 checkpoint(s) quarantined"),
        "{}",
        page.body
    );
    assert!(page.body.contains(r#"data-key="run-hit/3""#));
    assert!(page.body.contains(r#"data-key="run-hit/2""#));
    assert!(!page.body.contains("run-theirs"), "another tenant's runs");
    assert!(!page.body.contains("run-fine/"));
    assert!(
        page.body
            .contains("stored checksum does not match its bytes (expected "),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("checksum mismatch"),
        "no raw verifier text"
    );
    assert!(
        page.body
            .contains("<code>checkpointd runs drop-quarantined run-hit</code>")
    );
    assert!(
        page.body
            .contains(r#"<a href="/runs/run-hit">Open the run</a>"#)
    );
    // The verification form is still there.
    assert!(page.body.contains(r#"action="/integrity""#));

    // The run page says the same in words.
    let run = get(console(&app), "/runs/run-hit", Some(&cookie)).await;
    assert!(
        run.body
            .contains("stored checksum does not match its bytes")
    );
}

#[tokio::test]
async fn a_corrupt_result_is_labelled_a_corrupt_result_not_a_corrupt_intent() {
    let dir = tempfile::tempdir().unwrap();
    let app = sqlite_console(&dir).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    save_as(&app, &agent, None, "run-journal", 1).await.unwrap();
    let call_id = "step-2/send_email/0";
    let intent = RecordToolIntentRequest {
        run_id: "run-journal".into(),
        call_id: call_id.into(),
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
    client
        .record_tool_result(bearer(
            Some(&agent),
            None,
            tool("run-journal", call_id, 2, r#"{"sent":true}"#),
        ))
        .await
        .unwrap();
    app.raw_sql(&format!(
        "UPDATE tool_results SET output = CAST(X'00' || substr(output, 2) AS BLOB) \
         WHERE run_id = 'run-journal' AND call_id = '{call_id}' AND intent = 0"
    ))
    .await;

    let cookie = session(&app, &operator).await;
    let page = get(console(&app), "/runs/run-journal", Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body
            .contains("corrupt result (its recorded output fails its checksum)"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("corrupt intent"), "{}", page.body);
    assert!(page.body.contains(r#"<h2 id="journal">"#));
}
