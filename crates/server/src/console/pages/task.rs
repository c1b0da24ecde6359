//! One task in full (`/tasks/<id>`): state, attempts, errors, times, the run, the approval
//! request and its decision, input and result; its actions, and the confirmation a cancel
//! asks for. The queue keeps a task's current row only, so there is no per-attempt history.

use axum::extract::{Path, State};
use axum::response::Response;
use std::fmt::Write;

use super::task_states::state_name;
use super::tasks::{action_forms, approval_text, cancellable};
use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::Query;
use crate::console::html::{csrf_field, escape, notice, pretty_bytes, url_part, when};
use crate::console::session::Session;
use crate::proto::task_service_server::TaskService;
use crate::proto::{self, ErrorClass, TaskState};

/// `GET /tasks/{task_id}?confirm=cancel`.
pub async fn show(
    State(console): State<Shared>,
    session: Session,
    Path(task_id): Path<String>,
    Query(query): Query,
) -> Response {
    let got = match console.calls.tasks() {
        Ok(tasks) => match request(
            &session.context,
            "TaskService/Get",
            proto::GetRequest {
                task_id: task_id.clone(),
            },
        ) {
            Ok(call) => tasks.get(call).await.map(tonic::Response::into_inner),
            Err(status) => Err(status),
        },
        Err(status) => Err(status),
    };
    let task = match got {
        Ok(proto::GetResponse { task: Some(task) }) => task,
        Ok(_) => return super::not_found().await,
        Err(status) => return refused(&status),
    };
    let mut body = String::new();
    if let Some(done) = query.get("done") {
        body.push_str(&notice("Done", &format!("task {task_id}: {done}")));
    }
    let state = TaskState::try_from(task.state).unwrap_or(TaskState::Unspecified);
    if query.get("confirm").map(String::as_str) == Some("cancel") && cancellable(state) {
        let _ = write!(
            body,
            r#"<section id="confirm" class="confirm" role="alertdialog" aria-labelledby="confirm-title"><h2 id="confirm-title">Cancel this task?</h2><p>A cancelled task never runs again and cannot be requeued. Its run and checkpoints stay.</p><div class="actions"><form method="post" action="/tasks/{id}/cancel">{csrf}<input type="hidden" name="back" value="task"><button type="submit" class="danger">Yes, cancel the task</button></form><a href="/tasks/{id}">No, keep it</a></div></section>"#,
            id = url_part(&task_id),
            csrf = csrf_field(&session),
        );
    }
    let policy = task.retry_policy.unwrap_or_default();
    let class = match ErrorClass::try_from(task.last_error_class) {
        Ok(ErrorClass::Transient) => "transient",
        Ok(ErrorClass::Fatal) => "fatal",
        _ => "—",
    };
    let field = |body: &mut String, name: &str, value: &str| {
        let _ = write!(body, "<dt>{name}</dt><dd>{value}</dd>");
    };
    body.push_str(r#"<dl class="task">"#);
    field(
        &mut body,
        "Task",
        &format!("<code>{}</code>", escape(&task.task_id)),
    );
    field(
        &mut body,
        "Run",
        &format!(
            r#"<a href="/runs/{}">{}</a>"#,
            url_part(&task.run_id),
            escape(&task.run_id)
        ),
    );
    field(&mut body, "State", state_name(task.state));
    field(
        &mut body,
        "Attempts",
        &format!("{} of {}", task.attempts_used, policy.max_attempts),
    );
    field(
        &mut body,
        "Lease attempt (fencing)",
        &task.attempt.to_string(),
    );
    field(&mut body, "Last error", &escape(&task.last_error));
    field(&mut body, "Last error class", class);
    field(&mut body, "Worker", &escape(&task.worker_id));
    field(
        &mut body,
        "Lease expires",
        &when(task.lease_expires_at.as_ref()),
    );
    field(
        &mut body,
        "Next attempt",
        &when(task.next_attempt_at.as_ref()),
    );
    field(&mut body, "Created", &when(task.created_at.as_ref()));
    field(&mut body, "Updated", &when(task.updated_at.as_ref()));
    field(&mut body, "Idempotency key", &escape(&task.idempotency_key));
    field(
        &mut body,
        "Resumes after a decision",
        if task.auto_resume_hitl {
            "at once"
        } else {
            "after Resume"
        },
    );
    body.push_str("</dl>");
    let _ = write!(
        body,
        r#"<div class="actions">{}</div>"#,
        action_forms(&session, "task", &task)
    );
    if cancellable(state) {
        let _ = write!(
            body,
            r##"<p class="stop"><a class="danger" href="/tasks/{}?confirm=cancel#confirm">Cancel…</a></p>"##,
            url_part(&task.task_id)
        );
    }
    body.push_str("<h2>Approval</h2>");
    match &task.approval {
        None => body.push_str("<p>No approval was requested.</p>"),
        Some(approval) => {
            let decider = super::inbox_card::decider(&console, &approval.decided_by).await;
            let _ = write!(
                body,
                "<p>{}</p><p>Requested {}.</p><pre aria-label=\"Approval details\">{}</pre>",
                approval_text(&task, &decider),
                when(approval.requested_at.as_ref()),
                pretty_bytes(&approval.details),
            );
            if approval.decided && !approval.comment.is_empty() {
                let _ = write!(body, "<p>Comment: {}</p>", escape(&approval.comment));
            }
        }
    }
    let _ = write!(
        body,
        "<h2>Input</h2><pre>{}</pre><h2>Result</h2><pre>{}</pre><p>The queue keeps each task's current state only; earlier attempts are not recorded beyond their count and the last error.</p>",
        pretty_bytes(&task.input),
        pretty_bytes(&task.result),
    );
    render(&session, "Task", "Tasks", &body)
}
