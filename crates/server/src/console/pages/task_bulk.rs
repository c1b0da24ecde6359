//! Bulk requeue and cancel of the tasks in one state: a preview that says how many tasks the
//! press will change, then the change, one TaskService call per task as the signed-in
//! credential (so each is authorized, fenced and recorded exactly as a single press is).
//! The queue has no bulk operation; the console walks one List page of at most
//! [`BULK_CAP`] tasks, and a larger backlog takes another press.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use std::fmt::Write;
use tonic::Status;

use super::refused;
use super::task_states::{STATES, list_in};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::changing;
use crate::console::html::{csrf_field, escape, notice};
use crate::console::session::Session;
use crate::proto;
use crate::proto::TaskState;
use crate::proto::task_service_server::TaskService;

/// Most tasks one bulk press changes.
pub const BULK_CAP: u32 = 1000;

/// The bulk actions a state allows: requeue brings dead letters and failures back, cancel
/// stops what has not finished.
fn allowed(action: &str, state: TaskState) -> bool {
    match action {
        "requeue" => matches!(state, TaskState::Dead | TaskState::Failed),
        "cancel" => matches!(
            state,
            TaskState::Dead | TaskState::Pending | TaskState::InputRequired
        ),
        _ => false,
    }
}

/// The gRPC method behind `action`, checked against the role table before anything is read.
fn method(action: &str) -> &'static str {
    if action == "requeue" {
        "TaskService/Requeue"
    } else {
        "TaskService/Cancel"
    }
}

/// The bulk links for the tasks in `name` (`count` of them, more when `more`), and the
/// preview with its confirming form when `chosen` names an allowed action.
pub fn offer(
    session: &Session,
    name: &str,
    (count, more): (usize, bool),
    chosen: Option<&str>,
    changed: bool,
) -> String {
    let Some(state) = STATES.iter().find(|(known, _)| *known == name).map(|s| s.1) else {
        return String::new();
    };
    if count == 0 {
        return String::new();
    }
    let mut out = String::from(r#"<section id="bulk" aria-label="Bulk changes">"#);
    for action in ["requeue", "cancel"] {
        if allowed(action, state) && chosen != Some(action) {
            let _ = write!(
                out,
                r##"<a class="bulk-{action}{danger}" href="/tasks?state={name}&amp;bulk={action}#bulk">{} all {name} tasks…</a> "##,
                if action == "requeue" {
                    "Requeue"
                } else {
                    "Cancel"
                },
                danger = if action == "cancel" { " danger" } else { "" },
            );
        }
    }
    if let Some(action) = chosen.filter(|action| allowed(action, state)) {
        if changed {
            out.push_str(&notice(
                "Changed",
                "the number of tasks changed since the preview; check it again",
            ));
        }
        let verb = if action == "requeue" {
            "requeue"
        } else {
            "cancel"
        };
        let rest = if more {
            format!(" (the first {BULK_CAP}; more remain for another press)")
        } else {
            String::new()
        };
        let _ = write!(
            out,
            r#"<div class="confirm" role="alertdialog" aria-labelledby="bulk-title"><h2 id="bulk-title">This will {verb} <span id="bulk-count">{count}</span> task(s) in state {name}{rest}.</h2><div class="actions"><form method="post" action="/tasks/bulk">{csrf}<input type="hidden" name="state" value="{name}"><input type="hidden" name="action" value="{action}"><input type="hidden" name="expected" value="{count}"><button type="submit"{danger}>Yes, {verb} {count} task(s)</button></form><a href="/tasks?state={name}">No, leave them</a></div></div>"#,
            csrf = csrf_field(session),
            name = escape(name),
            danger = if action == "cancel" {
                r#" class="danger""#
            } else {
                ""
            },
        );
    }
    out.push_str("</section>");
    out
}

/// `POST /tasks/bulk` (state, action, expected): changes the tasks the preview counted, or
/// sends the operator back to a fresh preview when their number changed meanwhile.
pub async fn apply(State(console): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let (session, fields) = match changing(&console, &headers, &body).await {
        Ok(checked) => checked,
        Err(answer) => return answer,
    };
    let field = |key: &str| fields.get(key).map_or("", String::as_str);
    let (name, action) = (field("state"), field("action"));
    let Some(state) = STATES.iter().find(|(known, _)| *known == name).map(|s| s.1) else {
        return refused(&Status::invalid_argument("unknown task state"));
    };
    if !allowed(action, state) {
        return refused(&Status::invalid_argument(
            "that bulk change is not offered for that state",
        ));
    }
    // Refused for a role that may not make the single call, before anything is listed.
    if let Err(status) = request(&session.context, method(action), ()) {
        return refused(&status);
    }
    let tasks = match list_in(&console, &session, state, BULK_CAP).await {
        Ok((tasks, _)) => tasks,
        Err(status) => return refused(&status),
    };
    if field("expected").parse::<usize>().ok() != Some(tasks.len()) {
        return Redirect::to(&format!("/tasks?state={name}&bulk={action}&changed=1#bulk"))
            .into_response();
    }
    let api = match console.calls.tasks() {
        Ok(api) => api,
        Err(status) => return refused(&status),
    };
    let (mut done, mut refusals) = (0usize, 0usize);
    for task in tasks {
        let task_id = task.task_id;
        let result = if action == "requeue" {
            match request(
                &session.context,
                method(action),
                proto::RequeueRequest { task_id },
            ) {
                Ok(call) => api.requeue(call).await.map(drop),
                Err(status) => Err(status),
            }
        } else {
            match request(
                &session.context,
                method(action),
                proto::CancelRequest { task_id },
            ) {
                Ok(call) => api.cancel(call).await.map(drop),
                Err(status) => Err(status),
            }
        };
        // A task that moved on since it was listed (claimed, decided) is refused by the
        // queue's fencing; it is counted, not fatal to the rest.
        match result {
            Ok(()) => done += 1,
            Err(_) => refusals += 1,
        }
    }
    tracing::info!(
        actor = %session.context.identity.subject,
        tenant = %session.context.tenant.as_str(),
        action,
        state = name,
        done,
        refused = refusals,
        "console bulk task change"
    );
    let past = if action == "requeue" {
        "requeued"
    } else {
        "cancelled"
    };
    Redirect::to(&format!(
        "/tasks?state={name}&done={past}&count={done}&refused={refusals}"
    ))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::calls::test_context as context;
    use checkpointd_core::domain::Role;

    #[test]
    fn a_bulk_change_is_authorized_as_its_single_call_is() {
        for action in ["requeue", "cancel"] {
            let refused = request(&context(Role::Agent), method(action), ()).unwrap_err();
            assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{action}");
            for role in [Role::Operator, Role::Admin] {
                assert!(
                    request(&context(role), method(action), ()).is_ok(),
                    "{action}"
                );
            }
        }
    }

    #[test]
    fn only_the_states_a_change_applies_to_are_offered() {
        assert!(allowed("requeue", TaskState::Dead) && allowed("requeue", TaskState::Failed));
        assert!(!allowed("requeue", TaskState::Completed));
        assert!(!allowed("cancel", TaskState::Completed) && !allowed("cancel", TaskState::Running));
        assert!(!allowed("delete", TaskState::Dead));
    }
}
