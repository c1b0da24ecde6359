//! Tasks by state, with their attempts and last error, and the changes a person makes to a
//! task: approve, reject, requeue (a dead letter), cancel and resume. Every change is the
//! same call the gRPC port serves, made as the signed-in credential.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use std::fmt::Write;
use tonic::Status;

use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::{Query, changing, form};
use crate::console::html::{csrf_field, escape, notice, url_part, when};
use crate::console::session::Session;
use crate::proto::task_service_server::TaskService;
use crate::proto::{self, TaskState};

/// The states the page offers, in the order shown, with their names in URLs.
const STATES: [(&str, TaskState); 7] = [
    ("input_required", TaskState::InputRequired),
    ("dead", TaskState::Dead),
    ("pending", TaskState::Pending),
    ("running", TaskState::Running),
    ("failed", TaskState::Failed),
    ("completed", TaskState::Completed),
    ("cancelled", TaskState::Cancelled),
];

/// `GET /tasks?state=dead&page=TOKEN`.
pub async fn show(
    State(console): State<Shared>,
    session: Session,
    Query(query): Query,
) -> Response {
    let chosen = query.get("state").map_or("dead", String::as_str);
    let Some((name, state)) = STATES.iter().find(|(name, _)| *name == chosen).copied() else {
        return refused(&Status::invalid_argument("unknown task state"));
    };
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
    body.push_str(r#"<nav aria-label="Task states"><ul>"#);
    for (option, _) in STATES {
        let mark = if option == name {
            r#" aria-current="true""#
        } else {
            ""
        };
        let _ = write!(
            body,
            r#"<li><a href="/tasks?state={option}"{mark}>{option}</a></li>"#
        );
    }
    body.push_str("</ul></nav>");
    let _ = write!(
        body,
        "<table><caption>Tasks in state {name}</caption><thead><tr><th scope=col>Task</th><th scope=col>Run</th><th scope=col>State</th><th scope=col>Attempts</th><th scope=col>Last error</th><th scope=col>Approval</th><th scope=col>Updated</th><th scope=col>Actions</th></tr></thead><tbody>"
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

/// One task's row; `decider` is its decider as shown (escaped markup), if decided.
fn row(session: &Session, listed: &str, task: &proto::Task, decider: &str) -> String {
    let state = TaskState::try_from(task.state).unwrap_or(TaskState::Unspecified);
    let max = task
        .retry_policy
        .as_ref()
        .map_or(0, |policy| policy.max_attempts);
    let approval = match &task.approval {
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
    };
    let mut actions = String::new();
    let mut button = |action: &str, label: &str| {
        let _ = write!(
            actions,
            r#"<form method="post" action="/tasks/{}/{action}">{}<input type="hidden" name="back" value="tasks:{listed}"><button type="submit">{label}</button></form>"#,
            url_part(&task.task_id),
            csrf_field(session),
        );
    };
    match state {
        TaskState::Dead => {
            button("requeue", "Requeue");
            button("cancel", "Cancel");
        }
        TaskState::Pending | TaskState::Running => button("cancel", "Cancel"),
        TaskState::InputRequired => {
            if task
                .approval
                .as_ref()
                .is_some_and(|approval| approval.decided)
            {
                button("resume", "Resume");
            }
            button("cancel", "Cancel");
        }
        _ => {}
    }
    format!(
        "<tr><td><code>{id}</code></td><td><a href=\"/runs/{run_link}\">{run}</a></td><td>{state}</td><td>{used} of {max}</td><td>{error}</td><td>{approval}</td><td>{updated}</td><td class=actions>{actions}</td></tr>",
        id = escape(&task.task_id),
        run_link = url_part(&task.run_id),
        run = escape(&task.run_id),
        state = state
            .as_str_name()
            .trim_start_matches("TASK_STATE_")
            .to_lowercase(),
        used = task.attempts_used,
        error = escape(&task.last_error),
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
    // Back to the list the form was on: a task state's, or the inbox's view (its filters,
    // order and page), which is re-parsed so only a view, never another URL, comes back.
    let back = fields.get("back").map(String::as_str).unwrap_or("");
    let back = match (back.strip_prefix("tasks:"), back.strip_prefix("inbox?")) {
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
