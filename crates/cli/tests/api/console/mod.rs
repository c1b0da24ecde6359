//! The web console over real HTTP against a real server on port 0: sign-in with API keys only
//! for operators and admins, sessions and their expiry, CSRF on every change, tenant scoping,
//! and changes made in the console seen over gRPC.

mod http;
mod inbox;
mod integrity;
mod live;
mod oidc;
mod repairs;
mod setup;
mod task_pages;

use std::time::Duration;

use checkpointd::config::{ConsoleSettings, ServeConfig, ServerSettings};
use checkpointd::proto::{
    ClaimRequest, EnqueueRequest, ErrorClass, FailRequest, GetRequest, RetryPolicy, Task, TaskState,
};
use checkpointd_core::domain::{NewApiKey, Role};

use crate::auth::{api_key_auth, bearer, make_key, save_as, task_awaiting_approval};
use crate::support::{TestApp, serve_config, wait_until};
use http::{Reply, get, post};

/// A server with API keys and the console on, over memory, sessions lasting `session_ttl`.
async fn console_app(session_ttl: Duration) -> TestApp {
    console_app_on("memory://", session_ttl).await
}

/// The same over the database `url`.
async fn console_app_on(url: &str, session_ttl: Duration) -> TestApp {
    console_app_with(url, session_ttl, ServerSettings::default()).await
}

/// The same with `settings`, API keys turned on in them.
async fn console_app_with(url: &str, session_ttl: Duration, settings: ServerSettings) -> TestApp {
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let config = ServeConfig {
        server: ServerSettings {
            auth: api_key_auth(),
            ..settings
        },
        console: Some(ConsoleSettings {
            session_ttl,
            ..ConsoleSettings::new(loopback)
        }),
        database: url.into(),
        ..ServeConfig::default()
    };
    serve_config(config).await.0
}

fn console(app: &TestApp) -> std::net::SocketAddr {
    app.console_addr.expect("the console is on")
}

/// Signs in with `token` (and `tenant`); the answer.
async fn sign_in(app: &TestApp, token: &str, tenant: &str) -> Reply {
    post(
        console(app),
        "/sign-in",
        None,
        &[("api_key", token), ("tenant", tenant)],
    )
    .await
}

/// Signs in with `token` and returns the session cookie.
async fn session(app: &TestApp, token: &str) -> String {
    let reply = sign_in(app, token, "").await;
    assert_eq!(reply.status, 303, "{reply:?}");
    assert_eq!(reply.header("location"), Some("/inbox"));
    reply.session_cookie().expect("a session cookie")
}

/// The task `task_id` as the agent `token` reads it over gRPC.
async fn task_as(app: &TestApp, token: &str, task_id: &str) -> Task {
    let get = GetRequest {
        task_id: task_id.to_owned(),
    };
    let mut tasks = app.tasks().await;
    let answer = tasks.get(bearer(Some(token), None, get)).await.unwrap();
    answer.into_inner().task.unwrap()
}

fn goes_to_sign_in(reply: &Reply) -> bool {
    reply.status == 303 && reply.header("location") == Some("/sign-in")
}

#[tokio::test]
async fn without_a_session_every_page_leads_to_sign_in() {
    let app = console_app(Duration::from_secs(900)).await;
    for path in ["/inbox", "/runs", "/runs/r1", "/tasks", "/integrity"] {
        assert!(
            goes_to_sign_in(&get(console(&app), path, None).await),
            "{path}"
        );
    }
    let page = get(console(&app), "/sign-in", None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body
            .contains(r#"<label for="api_key">API key</label>"#)
    );

    // A cookie nobody handed out is no session.
    let made_up = format!("checkpointd_console={}", "ab".repeat(32));
    assert!(goes_to_sign_in(
        &get(console(&app), "/inbox", Some(&made_up)).await
    ));
}

/// The refusal's alert: the part of the sign-in page that differs between answers.
fn refusal_text(reply: &Reply) -> &str {
    let start = reply
        .body
        .find(r#"role="alert""#)
        .expect("an alert on the page");
    let end = start + reply.body[start..].find("</p>").unwrap();
    &reply.body[start..end]
}

#[tokio::test]
async fn every_refused_key_is_answered_alike_agent_revoked_unknown_and_malformed() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (revoked_id, revoked) = make_key(&app, Some("acme"), Role::Operator).await;
    assert_eq!(
        sign_in(&app, &revoked, "").await.status,
        303,
        "alive before"
    );
    app.keys
        .revoke_key(&revoked_id, std::time::SystemTime::now())
        .await
        .unwrap();
    // The agent key's id with another secret: only the secret's check can refuse it.
    let flipped = if agent.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{flipped}", &agent[..agent.len() - 1]);
    // Well formed, never stored.
    let unknown = NewApiKey::generate().unwrap().token;
    let answers = [
        ("agent", agent.as_str()),
        ("revoked", revoked.as_str()),
        ("forged", forged.as_str()),
        ("unknown", unknown.as_str()),
        ("malformed", "not-a-key"),
        ("empty", ""),
    ];
    let first = sign_in(&app, &agent, "").await;
    assert_eq!(first.status, 401);
    assert!(refusal_text(&first).contains("cannot sign in"), "{first:?}");
    for (what, token) in answers {
        let refused = sign_in(&app, token, "").await;
        assert_eq!(refused.status, first.status, "{what}");
        assert_eq!(
            refused.body, first.body,
            "{what}: the same page, word for word"
        );
        assert_eq!(refused.session_cookie(), None, "{what}");
    }
}

#[tokio::test]
async fn an_operator_signs_in_with_a_strict_http_only_cookie_and_sees_the_inbox() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    save_as(&app, &agent, None, "run-approve", 1).await.unwrap();
    let task = task_awaiting_approval(&app, &agent, "run-approve").await;

    let reply = sign_in(&app, &operator, "").await;
    let set = reply.header("set-cookie").unwrap().to_owned();
    // The cookie lasts the session's absolute life (12 h); the server ends an idle one sooner.
    for part in ["HttpOnly", "SameSite=Strict", "Max-Age=43200"] {
        assert!(set.contains(part), "{set}");
    }
    let cookie = reply.session_cookie().unwrap();
    let inbox = get(console(&app), "/inbox", Some(&cookie)).await;
    assert_eq!(inbox.status, 200);
    assert!(inbox.body.contains("deploy_production"), "{}", inbox.body);
    assert!(inbox.body.contains(&task.task_id));
    assert!(inbox.body.contains("in tenant <strong>acme</strong>"));
    assert_eq!(inbox.header("x-frame-options"), Some("DENY"));
    assert_eq!(inbox.header("cache-control"), Some("no-store"));
}

#[tokio::test]
async fn a_change_without_the_sessions_csrf_token_is_refused_and_changes_nothing() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let task = task_awaiting_approval(&app, &agent, "run-csrf").await;
    let cookie = session(&app, &operator).await;
    // Another session's token is as good as a forged one.
    let other = session(&app, &operator).await;
    let others_token = get(console(&app), "/inbox", Some(&other)).await.csrf();
    let path = format!("/tasks/{}/approve", task.task_id);
    for fields in [
        vec![("comment", "ok")],
        vec![("comment", "ok"), ("csrf", "0000")],
        vec![("comment", "ok"), ("csrf", others_token.as_str())],
    ] {
        let refused = post(console(&app), &path, Some(&cookie), &fields).await;
        assert_eq!(refused.status, 403, "{fields:?}");
    }
    // Nor does the right token help without the session cookie.
    let token = get(console(&app), "/inbox", Some(&cookie)).await.csrf();
    let anonymous = post(console(&app), &path, None, &[("csrf", token.as_str())]).await;
    assert!(goes_to_sign_in(&anonymous));

    let unchanged = task_as(&app, &agent, &task.task_id).await;
    assert_eq!(unchanged.state, TaskState::InputRequired as i32);
    assert!(!unchanged.approval.unwrap().decided);
}

#[tokio::test]
async fn an_approval_in_the_console_is_seen_over_grpc_with_the_operator_as_decider() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (operator_id, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let approved = task_awaiting_approval(&app, &agent, "run-yes").await;
    let rejected = task_awaiting_approval(&app, &agent, "run-no").await;
    let cookie = session(&app, &operator).await;
    let token = get(console(&app), "/inbox", Some(&cookie)).await.csrf();

    for (task, decision) in [(&approved, "approve"), (&rejected, "reject")] {
        let path = format!("/tasks/{}/{decision}", task.task_id);
        let fields = [("csrf", token.as_str()), ("comment", "checked the diff")];
        let reply = post(console(&app), &path, Some(&cookie), &fields).await;
        assert_eq!(reply.status, 303, "{reply:?}");
    }
    for (task, yes) in [(&approved, true), (&rejected, false)] {
        let seen = task_as(&app, &agent, &task.task_id).await;
        let approval = seen.approval.unwrap();
        assert!(approval.decided);
        assert_eq!(approval.approved, yes);
        assert_eq!(approval.decided_by, format!("key:{operator_id}"));
        assert_eq!(approval.comment, "checked the diff");
        assert!(approval.decided_at.is_some());
    }
    // The inbox no longer lists them.
    let inbox = get(console(&app), "/inbox", Some(&cookie)).await;
    assert!(!inbox.body.contains(&approved.task_id));
}

#[tokio::test]
async fn a_decided_task_parked_for_a_resume_is_resumed_from_the_inbox() {
    let parked = ServerSettings {
        auto_resume_hitl: false,
        ..ServerSettings::default()
    };
    let app = console_app_with("memory://", Duration::from_secs(900), parked).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (operator_id, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let task = task_awaiting_approval(&app, &agent, "run-parked").await;
    let cookie = session(&app, &operator).await;
    let token = get(console(&app), "/inbox", Some(&cookie)).await.csrf();
    let approve = format!("/tasks/{}/approve", task.task_id);
    let fields = [("csrf", token.as_str()), ("comment", "go")];
    assert_eq!(
        post(console(&app), &approve, Some(&cookie), &fields)
            .await
            .status,
        303
    );

    let inbox = get(console(&app), "/inbox", Some(&cookie)).await;
    // The decider by its key's name, the recorded `key:<id>` kept in the title.
    let decider = format!(
        r#"<strong>Approved</strong> by <span title="key:{operator_id}">operator test key (key "#
    );
    assert!(inbox.body.contains(&decider), "{}", inbox.body);
    let listed = get(console(&app), "/tasks?state=input_required", Some(&cookie)).await;
    let named = format!(r#"approved by <span title="key:{operator_id}">operator test key"#);
    assert!(listed.body.contains(&named), "{}", listed.body);
    assert!(inbox.body.contains("Resume the task"));
    assert_eq!(
        task_as(&app, &agent, &task.task_id).await.state,
        TaskState::InputRequired as i32
    );
    let resume = format!("/tasks/{}/resume", task.task_id);
    let reply = post(
        console(&app),
        &resume,
        Some(&cookie),
        &[("csrf", token.as_str())],
    )
    .await;
    assert_eq!(reply.status, 303, "{reply:?}");
    assert_eq!(
        task_as(&app, &agent, &task.task_id).await.state,
        TaskState::Pending as i32
    );
}

#[tokio::test]
async fn another_tenants_run_is_not_found_and_an_own_run_shows_its_timeline() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, admin) = make_key(&app, None, Role::Admin).await;
    let (_, agent_a) = make_key(&app, Some("tenant-a"), Role::Agent).await;
    let (_, operator_a) = make_key(&app, Some("tenant-a"), Role::Operator).await;
    save_as(&app, &admin, Some("tenant-b"), "their-run", 3)
        .await
        .unwrap();
    save_as(&app, &agent_a, None, "our-run", 1).await.unwrap();
    save_as(&app, &agent_a, None, "our-run", 2).await.unwrap();
    let cookie = session(&app, &operator_a).await;

    let theirs = get(console(&app), "/runs/their-run", Some(&cookie)).await;
    assert_eq!(theirs.status, 404, "{}", theirs.body);
    let listed = get(console(&app), "/runs", Some(&cookie)).await;
    assert!(listed.body.contains("our-run") && !listed.body.contains("their-run"));
    // Naming the other tenant at sign-in is refused, as `x-tenant-id` is on the gRPC port.
    assert_eq!(sign_in(&app, &operator_a, "tenant-b").await.status, 403);

    let ours = get(console(&app), "/runs/our-run?from=1&to=2", Some(&cookie)).await;
    assert_eq!(ours.status, 200, "{}", ours.body);
    assert!(ours.body.contains(">valid<"));
    assert!(
        ours.body
            .contains(r#"<del class="diff-del">-   &quot;step&quot;: 1</del>"#),
        "{}",
        ours.body
    );
    assert!(
        ours.body
            .contains(r#"<ins class="diff-add">+   &quot;step&quot;: 2</ins>"#)
    );
    assert!(ours.body.contains("  {\n"), "the unchanged brace is kept");
}

#[tokio::test]
async fn an_expired_session_is_refused() {
    let app = console_app(Duration::from_millis(1)).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let cookie = session(&app, &operator).await;
    let addr = console(&app);
    wait_until("the session has expired", || {
        let cookie = cookie.clone();
        async move { goes_to_sign_in(&get(addr, "/inbox", Some(&cookie)).await) }
    })
    .await;
    // And it stays refused: expiry is never undone.
    assert!(goes_to_sign_in(&get(addr, "/tasks", Some(&cookie)).await));
}

#[tokio::test]
async fn a_persons_requests_slide_the_session_and_passive_ones_do_not() {
    let ttl = Duration::from_secs(2);
    let app = console_app(ttl).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let cookie = session(&app, &operator).await;
    let addr = console(&app);
    // Active every half TTL for two TTLs: still signed in.
    let start = std::time::Instant::now();
    while start.elapsed() < ttl * 2 {
        tokio::time::sleep(ttl / 2).await;
        let alive = get(addr, "/session", Some(&cookie)).await;
        assert_eq!(alive.status, 200, "{alive:?}");
        assert!(
            alive.body.contains(r#""idle_ttl_ms":2000"#),
            "{}",
            alive.body
        );
    }
    // Passive requests (live refreshes) only: the session ends one TTL after the last person's.
    wait_until("the idle session has ended", || {
        let cookie = cookie.clone();
        async move {
            let passive = [("x-console-passive", "1")];
            goes_to_sign_in(&http::get_with(addr, "/inbox", Some(&cookie), &passive).await)
        }
    })
    .await;
    assert_eq!(get(addr, "/session", Some(&cookie)).await.status, 401);
}

#[tokio::test]
async fn revoking_the_key_ends_its_console_sessions() {
    let app = console_app(Duration::from_secs(900)).await;
    let (operator_id, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let cookie = session(&app, &operator).await;
    assert_eq!(
        get(console(&app), "/inbox", Some(&cookie)).await.status,
        200
    );
    app.keys
        .revoke_key(&operator_id, std::time::SystemTime::now())
        .await
        .unwrap();
    assert!(goes_to_sign_in(
        &get(console(&app), "/inbox", Some(&cookie)).await
    ));
}

#[tokio::test]
async fn a_dead_task_is_requeued_from_the_console() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let mut tasks = app.tasks().await;
    let enqueue = EnqueueRequest {
        run_id: "run-dead".into(),
        retry_policy: Some(RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }),
        ..EnqueueRequest::default()
    };
    let task = tasks
        .enqueue(bearer(Some(&agent), None, enqueue))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    let claim = ClaimRequest {
        worker_id: "w".into(),
        ..ClaimRequest::default()
    };
    let claimed = tasks
        .claim(bearer(Some(&agent), None, claim))
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0);
    let fail = FailRequest {
        task_id: task.task_id.clone(),
        attempt: claimed.attempt,
        error: "model timeout".into(),
        error_class: ErrorClass::Transient as i32,
    };
    let dead = tasks
        .fail(bearer(Some(&agent), None, fail))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(dead.state, TaskState::Dead as i32);

    let cookie = session(&app, &operator).await;
    let page = get(console(&app), "/tasks?state=dead", Some(&cookie)).await;
    assert!(
        page.body.contains(&task.task_id) && page.body.contains("model timeout"),
        "{}",
        page.body
    );
    let token = page.csrf();
    let path = format!("/tasks/{}/requeue", task.task_id);
    let reply = post(
        console(&app),
        &path,
        Some(&cookie),
        &[("csrf", token.as_str()), ("back", "tasks:dead")],
    )
    .await;
    assert_eq!(reply.status, 303, "{reply:?}");
    let requeued = task_as(&app, &agent, &task.task_id).await;
    assert_eq!(requeued.state, TaskState::Pending as i32);
    // Back on the dead letters, which no longer hold it, with a note of what was done.
    let back = reply.header("location").unwrap().to_owned();
    assert_eq!(
        back,
        format!("/tasks?state=dead&done=requeued&task={}", task.task_id)
    );
    let page = get(console(&app), &back, Some(&cookie)).await;
    assert!(
        page.body
            .contains(&format!("task {}: requeued", task.task_id))
    );
    assert!(page.body.contains("No tasks are dead."));
}
