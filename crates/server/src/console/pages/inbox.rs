//! The approval inbox: every task of the tenant waiting in `input_required`, with what it
//! asks (action, arguments, the run's step and last messages) and forms to approve or reject
//! it with a comment; decided tasks show who decided and when.

use axum::extract::State;
use axum::response::Response;
use std::fmt::Write;

use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::Query;
use crate::console::html::{
    csrf_field, escape, message_list, notice, pretty_bytes, url_part, when,
};
use crate::console::live;
use crate::console::session::Session;
use crate::proto::checkpoint_service_server::CheckpointService;
use crate::proto::task_service_server::TaskService;
use crate::proto::{self, TaskState};

/// How many of a run's latest messages the inbox shows for context.
const LAST_MESSAGES: u64 = 3;

/// `GET /inbox`.
pub async fn show(
    State(console): State<Shared>,
    session: Session,
    Query(query): Query,
) -> Response {
    // Taken before the list is read, so an event raised meanwhile still refreshes the page.
    let rendered = std::time::SystemTime::now();
    let tasks = match console.calls.tasks() {
        Ok(tasks) => tasks,
        Err(status) => return refused(&status),
    };
    let list = proto::ListRequest {
        state: TaskState::InputRequired as i32,
        page_size: 100,
        page_token: String::new(),
    };
    let listed = match request(&session.context, "TaskService/List", list) {
        Ok(call) => tasks.list(call).await,
        Err(status) => Err(status),
    };
    let waiting = match listed {
        Ok(answer) => answer.into_inner().tasks,
        Err(status) => return refused(&status),
    };
    let mut body = String::new();
    if let (Some(done), Some(task)) = (query.get("done"), query.get("task")) {
        body.push_str(&notice("Done", &format!("task {task}: {done}")));
    }
    if waiting.is_empty() {
        body.push_str("<p>Nothing is waiting for a decision.</p>");
    } else {
        let _ = write!(body, "<p>{} task(s) waiting.</p>", waiting.len());
    }
    for task in &waiting {
        body.push_str(&card(&console, &session, task).await);
    }
    body.push_str(&live::marker(&live::inbox_url(rendered)));
    render(&session, "Approval inbox", "Inbox", &body)
}

/// One waiting task: what it asks, its context, and the decision forms or the decision.
async fn card(console: &Shared, session: &Session, task: &proto::Task) -> String {
    let approval = task.approval.clone().unwrap_or_default();
    let id = escape(&task.task_id);
    let mut out = format!(
        r#"<article aria-labelledby="task-{id}"><h2 id="task-{id}">{action} <small>task {id}</small></h2>
<dl><dt>Run</dt><dd><a href="/runs/{run_link}">{run}</a></dd>
<dt>Requested</dt><dd>{requested}</dd><dt>Attempt</dt><dd>{attempt}</dd>"#,
        action = escape(&approval.action),
        run_link = url_part(&task.run_id),
        run = escape(&task.run_id),
        requested = when(approval.requested_at.as_ref()),
        attempt = task.attempt,
    );
    match context(console, session, &task.run_id).await {
        Ok((step, first, messages)) => {
            let _ = write!(out, "<dt>Step</dt><dd>{step}</dd>");
            let _ = write!(
                out,
                "<dt>Last messages</dt><dd>{}</dd>",
                message_list(first, &messages)
            );
        }
        Err(status) => {
            let _ = write!(
                out,
                "<dt>Step</dt><dd>none readable ({})</dd>",
                escape(status.message())
            );
        }
    }
    let _ = write!(
        out,
        "<dt>Arguments</dt><dd><pre>{}</pre></dd></dl>",
        pretty_bytes(&approval.details)
    );
    if approval.decided {
        let verdict = if approval.approved {
            "Approved"
        } else {
            "Rejected"
        };
        let _ = write!(
            out,
            "<p><strong>{verdict}</strong> by {} at {}: {}</p>",
            escape(&approval.decided_by),
            when(approval.decided_at.as_ref()),
            escape(&approval.comment),
        );
        // Decided but parked (enqueued with auto_resume_hitl false): it waits for a resume.
        let _ = write!(
            out,
            r#"<form method="post" action="/tasks/{}/resume">{}<input type="hidden" name="back" value="inbox"><button type="submit">Resume the task</button></form>"#,
            url_part(&task.task_id),
            csrf_field(session),
        );
    } else {
        let csrf = csrf_field(session);
        for (decision, label) in [("approve", "Approve"), ("reject", "Reject")] {
            let _ = write!(
                out,
                r#"<form method="post" action="/tasks/{link}/{decision}" class="decision">{csrf}
<input type="hidden" name="back" value="inbox">
<label for="{decision}-{id}">Comment ({decision})</label><br>
<textarea id="{decision}-{id}" name="comment" rows="2" cols="60"></textarea><br>
<button type="submit">{label}</button></form>"#,
                link = url_part(&task.task_id),
            );
        }
    }
    out.push_str("</article>");
    out
}

/// The run's latest step and its last few messages, read as the session's role would.
async fn context(
    console: &Shared,
    session: &Session,
    run_id: &str,
) -> Result<(i64, u64, Vec<proto::Message>), tonic::Status> {
    let head = proto::GetRunRequest {
        run_id: run_id.to_owned(),
    };
    let head = console
        .calls
        .checkpoints
        .get_run(request(&session.context, "CheckpointService/GetRun", head)?)
        .await?
        .into_inner()
        .run
        .unwrap_or_default();
    let first = head.message_count.saturating_sub(LAST_MESSAGES);
    let load = proto::LoadLatestRequest {
        run_id: run_id.to_owned(),
        message_offset: first,
        ..Default::default()
    };
    let latest = console
        .calls
        .checkpoints
        .load_latest(request(
            &session.context,
            "CheckpointService/LoadLatest",
            load,
        )?)
        .await?
        .into_inner()
        .checkpoint
        .unwrap_or_default();
    Ok((latest.step, first + 1, latest.messages))
}
