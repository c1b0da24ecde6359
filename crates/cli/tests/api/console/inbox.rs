//! The inbox's view in its URL over real HTTP: a page of the waiting tasks, filtered by
//! action, in either order, counted; a parameter it cannot read is a 400 that names it; a
//! decider is shown by the name of its key.

use std::time::Duration;

use checkpointd::proto::{ClaimRequest, EnqueueRequest, RequestApprovalRequest};
use checkpointd_core::domain::Role;

use super::http::get;
use super::{console, console_app, session};
use crate::auth::{bearer, make_key};
use crate::support::TestApp;

/// Enqueues a task for `run_id`, claims it and has it ask for `action`; its id.
async fn asking(app: &TestApp, agent: &str, run_id: &str, action: &str) -> String {
    let mut tasks = app.tasks().await;
    let enqueue = EnqueueRequest {
        run_id: run_id.to_owned(),
        input: b"{}".to_vec(),
        ..EnqueueRequest::default()
    };
    tasks
        .enqueue(bearer(Some(agent), None, enqueue))
        .await
        .unwrap();
    let claim = ClaimRequest {
        worker_id: "w1".into(),
        ..ClaimRequest::default()
    };
    let claimed = tasks
        .claim(bearer(Some(agent), None, claim))
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0);
    let asked = RequestApprovalRequest {
        task_id: claimed.task_id.clone(),
        attempt: claimed.attempt,
        action: action.into(),
        details: br#"{"step":2}"#.to_vec(),
    };
    tasks
        .request_approval(bearer(Some(agent), None, asked))
        .await
        .unwrap();
    claimed.task_id
}

/// The task ids of the cards in `body`, top to bottom.
fn cards(body: &str) -> Vec<String> {
    body.match_indices(r#"<article id="task-"#)
        .map(|(at, found)| {
            let rest = &body[at + found.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect()
}

#[tokio::test]
async fn the_inbox_pages_filters_and_sorts_by_its_url_and_counts() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let mut asked = Vec::new();
    for n in 0..5 {
        let action = if n % 2 == 0 { "send_email" } else { "pay" };
        asked.push(asking(&app, &agent, &format!("run-{n}"), action).await);
    }
    let cookie = session(&app, &operator).await;
    let at = |path: &'static str| {
        let cookie = cookie.clone();
        let app = &app;
        async move { get(console(app), path, Some(&cookie)).await }
    };

    let first = at("/inbox?size=2").await;
    assert_eq!(first.status, 200, "{first:?}");
    assert_eq!(cards(&first.body), asked[..2]);
    assert!(
        first
            .body
            .contains("<strong>5</strong> waiting; showing 1–2.")
    );
    assert!(first.body.contains("page 1 of 3"));
    assert!(
        first
            .body
            .contains(r#"href="/inbox?size=2&amp;page=2" rel="next""#)
    );
    assert!(
        first
            .body
            .contains(r#"<option value="send_email">send_email (3)</option>"#)
    );
    assert!(first.body.contains("<span class=\"step\">step 2</span>"));

    let last = at("/inbox?size=2&page=3").await;
    assert_eq!(cards(&last.body), asked[4..]);
    let newest = at("/inbox?sort=newest&size=2").await;
    assert_eq!(cards(&newest.body), [asked[4].clone(), asked[3].clone()]);
    let pay = at("/inbox?action=pay").await;
    assert_eq!(cards(&pay.body), [asked[1].clone(), asked[3].clone()]);
    assert!(
        pay.body
            .contains("<strong>5</strong> waiting, <strong>2</strong> match")
    );
    // Nothing has waited a day yet.
    let old = at("/inbox?age=1d").await;
    assert!(cards(&old.body).is_empty());
    assert!(old.body.contains("<strong>0</strong> match"));
}

#[tokio::test]
async fn an_inbox_parameter_it_cannot_read_is_a_400_naming_it() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let cookie = session(&app, &operator).await;
    for (path, names) in [
        ("/inbox?page=0", "page must be a whole number from 1"),
        ("/inbox?page=two", "page must be a whole number from 1"),
        (
            "/inbox?size=101",
            "size must be a whole number from 1 to 100",
        ),
        ("/inbox?sort=sideways", "sort must be oldest or newest"),
        (
            "/inbox?age=soon",
            "age must be a duration such as 5m, 1h or 2d",
        ),
    ] {
        let reply = get(console(&app), path, Some(&cookie)).await;
        assert_eq!(reply.status, 400, "{path}: {reply:?}");
        assert!(reply.body.contains(names), "{path}: {}", reply.body);
    }
}
