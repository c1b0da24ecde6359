//! The tasks pages over real HTTP: counts per state and the default view, a task's own page,
//! cancel only through its confirmation, and bulk requeue with its preview count, its CSRF
//! check and its tenant scope; and the run page's default comparison.

use std::time::Duration;

use checkpointd::proto::{
    ClaimRequest, EnqueueRequest, ErrorClass, FailRequest, RetryPolicy, Task, TaskState,
};
use checkpointd_core::domain::Role;

use super::http::{get, post};
use super::{console, console_app, session, task_as};
use crate::auth::{bearer, make_key};
use crate::support::TestApp;
use crate::support::requests::save;

/// Enqueues a task for `run_id` as `agent` allowing one attempt.
async fn enqueue(app: &TestApp, agent: &str, run_id: &str) -> Task {
    let enqueue = EnqueueRequest {
        run_id: run_id.into(),
        retry_policy: Some(RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }),
        ..EnqueueRequest::default()
    };
    app.tasks()
        .await
        .enqueue(bearer(Some(agent), None, enqueue))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

/// A task for `run_id` failed by its only attempt: a dead letter.
async fn dead_task(app: &TestApp, agent: &str, run_id: &str) -> Task {
    let task = enqueue(app, agent, run_id).await;
    let mut tasks = app.tasks().await;
    let claim = ClaimRequest {
        worker_id: "w".into(),
        ..ClaimRequest::default()
    };
    let claimed = tasks
        .claim(bearer(Some(agent), None, claim))
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0);
    assert_eq!(claimed.task_id, task.task_id);
    let fail = FailRequest {
        task_id: task.task_id.clone(),
        attempt: claimed.attempt,
        error: "model <timeout>".into(),
        error_class: ErrorClass::Transient as i32,
    };
    tasks
        .fail(bearer(Some(agent), None, fail))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
}

#[tokio::test]
async fn the_tasks_page_counts_each_state_and_opens_on_the_dead_letters() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let dead = dead_task(&app, &agent, "run-a").await;
    dead_task(&app, &agent, "run-b").await;
    enqueue(&app, &agent, "run-c").await;
    let cookie = session(&app, &operator).await;

    // No input_required task: the first state an operator acts on that holds any is dead.
    let page = get(console(&app), "/tasks", Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<caption>Tasks in state dead</caption>"));
    assert!(
        page.body.contains(r#"data-key="count-dead">(2)<"#),
        "{}",
        page.body
    );
    assert!(page.body.contains(r#"data-key="count-pending">(1)<"#));
    assert!(
        page.body
            .contains(r#"data-key="count-input_required">(0)<"#)
    );
    // Stored text is escaped; cancel is a link to a confirmation, not a one-press form.
    assert!(page.body.contains("model &lt;timeout&gt;"));
    assert!(
        !page
            .body
            .contains(&format!(r#"action="/tasks/{}/cancel""#, dead.task_id))
    );
    assert!(
        page.body
            .contains(&format!("/tasks/{}?confirm=cancel#confirm", dead.task_id))
    );
}

#[tokio::test]
async fn a_tasks_own_page_shows_it_and_cancel_asks_first() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let (_, stranger) = make_key(&app, Some("globex"), Role::Operator).await;
    let dead = dead_task(&app, &agent, "run-detail").await;
    let cookie = session(&app, &operator).await;
    let path = format!("/tasks/{}", dead.task_id);

    let page = get(console(&app), &path, Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("<dt>State</dt><dd>dead</dd>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("<dt>Attempts</dt><dd>1 of 1</dd>"));
    assert!(page.body.contains("model &lt;timeout&gt;"));
    assert!(
        page.body
            .contains(r#"<a href="/runs/run-detail">run-detail</a>"#)
    );
    assert!(page.body.contains("No approval was requested."));
    assert!(!page.body.contains("Cancel this task?"));

    let asking = get(
        console(&app),
        &format!("{path}?confirm=cancel"),
        Some(&cookie),
    )
    .await;
    assert!(asking.body.contains("Cancel this task?"));
    let token = asking.csrf();
    let cancel = format!("{path}/cancel");
    // The confirming form, like every change, needs the session's token.
    let forged = post(console(&app), &cancel, Some(&cookie), &[("back", "task")]).await;
    assert_eq!(forged.status, 403);
    assert_eq!(
        task_as(&app, &agent, &dead.task_id).await.state,
        TaskState::Dead as i32
    );
    let reply = post(
        console(&app),
        &cancel,
        Some(&cookie),
        &[("csrf", token.as_str()), ("back", "task")],
    )
    .await;
    assert_eq!(reply.status, 303, "{reply:?}");
    assert_eq!(
        reply.header("location"),
        Some(format!("{path}?done=cancelled&task={}", dead.task_id).as_str())
    );
    assert_eq!(
        task_as(&app, &agent, &dead.task_id).await.state,
        TaskState::Cancelled as i32
    );

    // Another tenant's operator does not find it.
    let theirs = session(&app, &stranger).await;
    assert_eq!(get(console(&app), &path, Some(&theirs)).await.status, 404);
}

/// The fields of the bulk requeue of dead tasks with `token`, expecting `expected` tasks.
fn fields<'a>(token: &'a str, expected: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("csrf", token),
        ("state", "dead"),
        ("action", "requeue"),
        ("expected", expected),
    ]
}

#[tokio::test]
async fn bulk_requeue_previews_its_count_and_changes_only_this_tenants_tasks() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let (_, stranger) = make_key(&app, Some("globex"), Role::Admin).await;
    let mut dead = Vec::new();
    for n in 0..3 {
        dead.push(dead_task(&app, &agent, &format!("run-{n}")).await);
    }
    let cookie = session(&app, &operator).await;

    let preview = get(
        console(&app),
        "/tasks?state=dead&bulk=requeue",
        Some(&cookie),
    )
    .await;
    assert!(
        preview
            .body
            .contains(r#"This will requeue <span id="bulk-count">3</span> task(s) in state dead"#),
        "{}",
        preview.body
    );
    let token = preview.csrf();

    // Without the token: refused, nothing changed.
    let forged = post(
        console(&app),
        "/tasks/bulk",
        Some(&cookie),
        &fields("", "3")[1..],
    )
    .await;
    assert_eq!(forged.status, 403);
    // Another tenant's admin, even with its own valid token, sees none of them: the count it
    // confirms does not match, and nothing of acme's changes.
    let theirs = session(&app, &stranger).await;
    let their_page = get(console(&app), "/tasks?state=dead", Some(&theirs)).await;
    assert!(their_page.body.contains(r#"data-key="count-dead">(0)<"#));
    let their_token = their_page.csrf();
    let refused = post(
        console(&app),
        "/tasks/bulk",
        Some(&theirs),
        &fields(&their_token, "3"),
    )
    .await;
    assert_eq!(refused.status, 303);
    assert!(refused.header("location").unwrap().contains("changed=1"));
    for task in &dead {
        assert_eq!(
            task_as(&app, &agent, &task.task_id).await.state,
            TaskState::Dead as i32
        );
    }
    // A count that no longer holds sends the operator back to a fresh preview.
    let again = post(
        console(&app),
        "/tasks/bulk",
        Some(&cookie),
        &fields(&token, "2"),
    )
    .await;
    assert_eq!(
        again.header("location"),
        Some("/tasks?state=dead&bulk=requeue&changed=1#bulk")
    );

    let done = post(
        console(&app),
        "/tasks/bulk",
        Some(&cookie),
        &fields(&token, "3"),
    )
    .await;
    assert_eq!(done.status, 303, "{done:?}");
    assert_eq!(
        done.header("location"),
        Some("/tasks?state=dead&done=requeued&count=3&refused=0")
    );
    for task in &dead {
        assert_eq!(
            task_as(&app, &agent, &task.task_id).await.state,
            TaskState::Pending as i32
        );
    }
    let after = get(
        console(&app),
        done.header("location").unwrap(),
        Some(&cookie),
    )
    .await;
    assert!(
        after.body.contains("requeued 3 task(s); 0 refused"),
        "{}",
        after.body
    );
    assert!(after.body.contains(r#"data-key="count-pending">(3)<"#));
}

#[tokio::test]
async fn the_run_page_compares_the_previous_checkpoint_with_the_latest_by_default() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let mut client = app.client().await;
    for (step, state) in [
        (1, r#"{"n":"one"}"#),
        (2, r#"{"n":"two"}"#),
        (3, r#"{"n":"three"}"#),
    ] {
        let mut request = save("run-cmp", step, state.as_bytes());
        request
            .metadata
            .insert("model".into(), format!("<m{step}>"));
        client
            .save(bearer(Some(&agent), None, request))
            .await
            .unwrap();
    }
    let cookie = session(&app, &operator).await;
    let page = get(console(&app), "/runs/run-cmp", Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Step 2 → step 3"), "{}", page.body);
    assert!(page.body.contains("&quot;two&quot;</del>"), "{}", page.body);
    assert!(page.body.contains("&quot;three&quot;</ins>"));
    assert!(page.body.contains(r#"<option value="2" selected>"#));
    assert!(page.body.contains(r#"<option value="3" selected>"#));
    // The diff comes before the timeline, and every checkpoint's metadata is shown, escaped.
    let diff = page.body.find(r#"id="diff""#).unwrap();
    let timeline = page.body.find("<h2>Checkpoints</h2>").unwrap();
    assert!(diff < timeline);
    for step in 1..=3 {
        assert!(
            page.body
                .contains(&format!("<code>model</code>=&lt;m{step}&gt;"))
        );
    }
    // An explicit choice still stands.
    let chosen = get(console(&app), "/runs/run-cmp?from=1&to=3", Some(&cookie)).await;
    assert!(chosen.body.contains("Step 1 → step 3"));
}
