//! Tasks by state: how many are in each (tabs), the tasks of one with their attempts and last
//! error, and the changes a person makes to a task: approve, reject, requeue, cancel and resume.
//! Every change is the same call the gRPC port serves, made as the signed-in credential.
//! Cancel is never one press: its link leads to a confirmation on the task's page.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use std::fmt::Write;
use tonic::Status;

use super::task_states::{STATES, list_in, state_name};
use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::{Query, changing, form};
use crate::console::html::{csrf_field, escape, notice, url_part, when};
use crate::console::session::Session;
use crate::proto::task_service_server::TaskService;
use crate::proto::{self, TaskState};

/// Most tasks counted per state: the queue keeps no counts, so a count is one List page of
/// this size, shown as "1000+" when more follow.
const COUNT_PAGE: u32 = 1000;

/// How many tasks are in each state, in [`STATES`] order: (count, more than counted).
async fn counts(console: &Shared, session: &Session) -> Result<Vec<(usize, bool)>, Status> {
    let mut out = Vec::with_capacity(STATES.len());
    for (_, state) in STATES {
        let (tasks, more) = list_in(console, session, state, COUNT_PAGE).await?;
        out.push((tasks.len(), more));
    }
    Ok(out)
}

fn count_text((count, more): (usize, bool)) -> String {
    if more {
        format!("{count}+")
    } else {
        count.to_string()
    }
}

/// `GET /tasks?state=dead&page=TOKEN&bulk=requeue`.
pub async fn show(
    State(console): State<Shared>,
    session: Session,
    Query(query): Query,
) -> Response {
    let counts = match counts(&console, &session).await {
        Ok(counts) => counts,
        Err(status) => return refused(&status),
    };
    let chosen = match query.get("state") {
        Some(chosen) => chosen.as_str(),
        None => STATES
            .iter()
            .zip(&counts)
            .find(|(_, (count, _))| *count > 0)
            .map_or("input_required", |((name, _), _)| name),
    };
    let Some(at) = STATES.iter().position(|(name, _)| *name == chosen) else {
        return refused(&Status::invalid_argument("unknown task state"));
    };
    let (name, state) = STATES[at];
    let list = proto::ListRequest {
        state: state as i32,
        page_size: 50,
        page_token: query.get("page").cloned().unwrap_or_default(),
    };
    let listed = match console.calls.tasks() {
        Ok(tasks) => match request(&session.context, "TaskService/List", list) {
            Ok(call) => tasks.list(call).await.map(tonic::Response::into_inner),
            Err(status) => Err(status),
        },
        Err(status) => Err(status),
    };
    let listed = match listed {
        Ok(listed) => listed,
        Err(status) => return refused(&status),
    };
    let mut body = String::new();
    if let (Some(done), Some(task)) = (query.get("done"), query.get("task")) {
        body.push_str(&notice("Done", &format!("task {task}: {done}")));
    }
    if let (Some(done), Some(count)) = (query.get("done"), query.get("count")) {
        let refused = query.get("refused").map_or("0", String::as_str);
        body.push_str(&notice(
            "Done",
            &format!("{done} {count} task(s); {refused} refused"),
        ));
    }
    body.push_str(r#"<nav aria-label="Task states" class="tabs"><ul>"#);
    for ((option, _), count) in STATES.iter().zip(&counts) {
        let mark = if *option == name {
            r#" aria-current="true""#
        } else {
            ""
        };
        let _ = write!(
            body,
            r#"<li><a href="/tasks?state={option}"{mark}>{option} <span class="count" data-key="count-{option}">({})</span></a></li>"#,
            count_text(*count),
        );
    }
    body.push_str("</ul></nav>");
    body.push_str(&super::task_bulk::offer(
        &session,
        name,
        counts[at],
        query.get("bulk").map(String::as_str),
        query.contains_key("changed"),
    ));
    let _ = write!(
        body,
        "<table><caption>Tasks in state {name}</caption><thead><tr><th scope=col>Task</th><th scope=col>Run</th><th scope=col>State</th><th scope=col>Attempts</th><th scope=col>Last error</th><th scope=col>Approval</th><th scope=col>Updated</th><th scope=col>Actions</th><th scope=col>Stop</th></tr></thead><tbody>"
    );
    // Deciders by their key's name, each key looked up once per page.
    let mut deciders = std::collections::HashMap::new();
    for task in &listed.tasks {
        let decided_by = task
            .approval
            .as_ref()
            .filter(|approval| approval.decided)
            .map_or("", |approval| approval.decided_by.as_str());
        if !decided_by.is_empty() && !deciders.contains_key(decided_by) {
            let shown = super::inbox_card::decider(&console, decided_by).await;
            deciders.insert(decided_by.to_owned(), shown);
        }
        let shown = deciders.get(decided_by).map_or("", String::as_str);
        body.push_str(&row(&session, name, task, shown));
    }
    body.push_str("</tbody></table>");
    if listed.tasks.is_empty() {
        let _ = write!(body, "<p>No tasks are {name}.</p>");
    }
    if !listed.next_page_token.is_empty() {
        let _ = write!(
            body,
            r#"<p><a href="/tasks?state={name}&amp;page={}">Next page</a></p>"#,
            url_part(&listed.next_page_token)
        );
    }
    render(&session, "Tasks", "Tasks", &body)
}

/// The approval as one line: its action and, once decided, the decision by `decider` (its
/// decider as shown: escaped markup).
pub fn approval_text(task: &proto::Task, decider: &str) -> String {
    match &task.approval {
        None => "—".to_owned(),
        Some(approval) if approval.decided => format!(
            "{} {} by {} at {}",
            escape(&approval.action),
            if approval.approved {
                "approved"
            } else {
                "rejected"
            },
            decider,
            when(approval.decided_at.as_ref())
        ),
        Some(approval) => format!("{} awaiting decision", escape(&approval.action)),
    }
}

/// Whether a task in `state` may still be cancelled.
pub fn cancellable(state: TaskState) -> bool {
    matches!(
        state,
        TaskState::Dead | TaskState::Pending | TaskState::Running | TaskState::InputRequired
    )
}

/// The one-press (non-destructive) actions on a task, as forms that come back to `back`.
pub fn action_forms(session: &Session, back: &str, task: &proto::Task) -> String {
    let state = TaskState::try_from(task.state).unwrap_or(TaskState::Unspecified);
    let mut actions = String::new();
    let mut button = |action: &str, label: &str| {
        let _ = write!(
            actions,
            r#"<form method="post" action="/tasks/{}/{action}">{}<input type="hidden" name="back" value="{}"><button type="submit">{label}</button></form>"#,
            url_part(&task.task_id),
            csrf_field(session),
            escape(back),
        );
    };
    match state {
        TaskState::Dead | TaskState::Failed => button("requeue", "Requeue"),
        TaskState::InputRequired
            if task
                .approval
                .as_ref()
                .is_some_and(|approval| approval.decided) =>
        {
            button("resume", "Resume");
        }
        _ => {}
    }
    actions
}

/// One task's row; `decider` is its decider as shown (escaped markup), if decided.
fn row(session: &Session, listed: &str, task: &proto::Task, decider: &str) -> String {
    let state = TaskState::try_from(task.state).unwrap_or(TaskState::Unspecified);
    let max = task
        .retry_policy
        .as_ref()
        .map_or(0, |policy| policy.max_attempts);
    let actions = action_forms(session, &format!("tasks:{listed}"), task);
    // Cancel sits in its own column, away from Requeue, and asks first on the task's page.
    let stop = if cancellable(state) {
        format!(
            r##"<a class="danger" href="/tasks/{}?confirm=cancel#confirm">Cancel…</a>"##,
            url_part(&task.task_id)
        )
    } else {
        String::new()
    };
    format!(
        "<tr data-key=\"{key}\"><td><a href=\"/tasks/{link}\"><code>{id}</code></a></td><td><a href=\"/runs/{run_link}\">{run}</a></td><td>{state}</td><td>{used} of {max}</td><td>{error}</td><td>{approval}</td><td>{updated}</td><td class=actions>{actions}</td><td>{stop}</td></tr>",
        key = escape(&task.task_id),
        link = url_part(&task.task_id),
        id = escape(&task.task_id),
        run_link = url_part(&task.run_id),
        run = escape(&task.run_id),
        state = state_name(task.state),
        used = task.attempts_used,
        error = escape(&task.last_error),
        approval = approval_text(task, decider),
        updated = when(task.updated_at.as_ref()),
    )
}

/// `POST /tasks/{task_id}/{decision}`: approve, reject, requeue, cancel or resume, with the
/// session's CSRF token; then back to the page the form was on.
pub async fn change(
    State(console): State<Shared>,
    Path((task_id, decision)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (session, fields) = match changing(&console, &headers, &body).await {
        Ok(checked) => checked,
        Err(answer) => return answer,
    };
    let tasks = match console.calls.tasks() {
        Ok(tasks) => tasks,
        Err(status) => return refused(&status),
    };
    let context = &session.context;
    let comment = fields.get("comment").cloned().unwrap_or_default();
    let id = task_id.clone();
    // `decided_by` stays empty: the server records the credential's identity.
    let done = match decision.as_str() {
        "approve" => match request(
            context,
            "TaskService/Approve",
            proto::ApproveRequest {
                task_id: id,
                decided_by: String::new(),
                comment,
            },
        ) {
            Ok(call) => tasks.approve(call).await.map(drop),
            Err(status) => Err(status),
        },
        "reject" => match request(
            context,
            "TaskService/Reject",
            proto::RejectRequest {
                task_id: id,
                decided_by: String::new(),
                comment,
            },
        ) {
            Ok(call) => tasks.reject(call).await.map(drop),
            Err(status) => Err(status),
        },
        "requeue" => match request(
            context,
            "TaskService/Requeue",
            proto::RequeueRequest { task_id: id },
        ) {
            Ok(call) => tasks.requeue(call).await.map(drop),
            Err(status) => Err(status),
        },
        "cancel" => match request(
            context,
            "TaskService/Cancel",
            proto::CancelRequest { task_id: id },
        ) {
            Ok(call) => tasks.cancel(call).await.map(drop),
            Err(status) => Err(status),
        },
        "resume" => match request(
            context,
            "TaskService/ResumeTask",
            proto::ResumeTaskRequest { task_id: id },
        ) {
            Ok(call) => tasks.resume_task(call).await.map(drop),
            Err(status) => Err(status),
        },
        _ => return super::not_found().await,
    };
    if let Err(status) = done {
        return refused(&status);
    }
    let done = match decision.as_str() {
        "approve" => "approved",
        "reject" => "rejected",
        "requeue" => "requeued",
        "cancel" => "cancelled",
        _ => "resumed",
    };
    // Back to the page the form was on: a task state's list, the task's own page, or the
    // inbox's view (its filters, order and page), which is re-parsed so only a view, never
    // another URL, comes back.
    let back = fields.get("back").map_or("", String::as_str);
    let back = match (back.strip_prefix("tasks:"), back.strip_prefix("inbox?")) {
        _ if back == "task" => Some(format!("/tasks/{}?", url_part(&task_id))),
        (Some(state), _) => STATES
            .iter()
            .find(|(name, _)| *name == state)
            .map(|(name, _)| format!("/tasks?state={name}&")),
        (_, Some(view)) => super::inbox::InboxView::parse(&form(view.as_bytes()))
            .ok()
            .map(|view| match view.link(view.page) {
                link if link.is_empty() => "/inbox?".to_owned(),
                link => format!("/inbox?{link}&"),
            }),
        _ => None,
    }
    .unwrap_or_else(|| "/inbox?".to_owned());
    let target = format!("{back}done={done}&task={}", url_part(&task_id));
    Redirect::to(&target).into_response()
}
