//! How a task looks to an operator: JSON, a detail view, and table rows.

use serde_json::{Value, json};

use super::output::{
    Table, bytes_json, bytes_text, one_line, or_dash, print_fields, time_json, time_text,
};
use checkpointd::proto::{self, Approval, Task};

/// Widest cell in the NOTE and DETAILS columns of a task table.
const NOTE_WIDTH: usize = 60;
/// Longest opaque value (input, result, details) in the detail view.
const DETAIL_WIDTH: usize = 2000;

/// `input_required`, `dead`, ...: the wire name without its prefix, in lower case.
pub fn state_name(raw: i32) -> String {
    match proto::TaskState::try_from(raw) {
        Ok(state) => state
            .as_str_name()
            .trim_start_matches("TASK_STATE_")
            .to_ascii_lowercase(),
        Err(_) => format!("unknown({raw})"),
    }
}

fn error_class_name(raw: i32) -> Option<&'static str> {
    match proto::ErrorClass::try_from(raw) {
        Ok(proto::ErrorClass::Transient) => Some("transient"),
        Ok(proto::ErrorClass::Fatal) => Some("fatal"),
        _ => None,
    }
}

fn empty_as_null(text: &str) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        Value::String(text.to_owned())
    }
}

fn seconds(duration: Option<&prost_types::Duration>) -> Value {
    duration.map_or(Value::Null, |d| {
        json!(d.seconds as f64 + f64::from(d.nanos) / 1e9)
    })
}

fn decision_name(approval: &Approval) -> Option<&'static str> {
    match (approval.decided, approval.approved) {
        (false, _) => None,
        (true, true) => Some("approved"),
        (true, false) => Some("rejected"),
    }
}

fn approval_json(approval: &Approval) -> Value {
    json!({
        "action": approval.action,
        "details": bytes_json(&approval.details),
        "requested_at": time_json(approval.requested_at.as_ref()),
        "decided": approval.decided,
        "decision": decision_name(approval),
        "decided_by": empty_as_null(&approval.decided_by),
        "decided_at": time_json(approval.decided_at.as_ref()),
        "comment": empty_as_null(&approval.comment),
    })
}

/// The task as JSON: field names as in the proto, states and classes in lower case, times in
/// RFC 3339, bytes as text (or `{"hex": ...}` when not UTF-8).
pub fn task_json(task: &Task) -> Value {
    let policy = task.retry_policy.as_ref().map_or(Value::Null, |policy| {
        json!({
            "initial_delay_seconds": seconds(policy.initial_delay.as_ref()),
            "multiplier": policy.multiplier,
            "max_delay_seconds": seconds(policy.max_delay.as_ref()),
            "jitter": policy.jitter.unwrap_or_default(),
            "max_attempts": policy.max_attempts,
        })
    });
    json!({
        "task_id": task.task_id,
        "run_id": task.run_id,
        "state": state_name(task.state),
        "input": bytes_json(&task.input),
        "attempt": task.attempt,
        "attempts_used": task.attempts_used,
        "retry_policy": policy,
        "idempotency_key": empty_as_null(&task.idempotency_key),
        "auto_resume_hitl": task.auto_resume_hitl,
        "worker_id": empty_as_null(&task.worker_id),
        "lease_expires_at": time_json(task.lease_expires_at.as_ref()),
        "next_attempt_at": time_json(task.next_attempt_at.as_ref()),
        "last_error": empty_as_null(&task.last_error),
        "last_error_class": error_class_name(task.last_error_class),
        "approval": task.approval.as_ref().map_or(Value::Null, approval_json),
        "result": bytes_json(&task.result),
        "created_at": time_json(task.created_at.as_ref()),
        "updated_at": time_json(task.updated_at.as_ref()),
    })
}

fn max_attempts(task: &Task) -> String {
    task.retry_policy
        .as_ref()
        .map_or_else(|| "?".to_owned(), |policy| policy.max_attempts.to_string())
}

fn last_error_text(task: &Task) -> String {
    match error_class_name(task.last_error_class) {
        Some(class) => format!("[{class}] {}", task.last_error),
        None => task.last_error.clone(),
    }
}

/// The approval in one short line: what is asked, and the decision once there is one.
fn approval_summary(approval: &Approval) -> String {
    let details = bytes_text(&approval.details);
    let asked = if details.is_empty() {
        approval.action.clone()
    } else {
        format!("{} {details}", approval.action)
    };
    match decision_name(approval) {
        None => format!("awaiting approval: {asked}"),
        Some(decision) => format!("{decision} by {}: {asked}", approval.decided_by),
    }
}

/// What an approval decision does to the task: run it at once, or park it for an operator.
fn auto_resume_text(task: &Task) -> String {
    if task.auto_resume_hitl {
        "yes: claimable as soon as approved or rejected".to_owned()
    } else {
        "no: parked after approval or rejection until `tasks resume ID`".to_owned()
    }
}

/// Every field of a task, one per line.
pub fn print_task(task: &Task) {
    let mut fields = vec![
        ("task", task.task_id.clone()),
        ("run", task.run_id.clone()),
        ("state", state_name(task.state)),
        (
            "attempts",
            format!(
                "{} used of {} (claims so far: {})",
                task.attempts_used,
                max_attempts(task),
                task.attempt
            ),
        ),
        ("worker", or_dash(&task.worker_id)),
        ("lease expires", time_text(task.lease_expires_at.as_ref())),
        ("next attempt", time_text(task.next_attempt_at.as_ref())),
        ("created", time_text(task.created_at.as_ref())),
        ("updated", time_text(task.updated_at.as_ref())),
        ("idempotency key", or_dash(&task.idempotency_key)),
        ("auto resume", auto_resume_text(task)),
        (
            "last error",
            or_dash(&one_line(&last_error_text(task), DETAIL_WIDTH)),
        ),
        (
            "input",
            or_dash(&one_line(&bytes_text(&task.input), DETAIL_WIDTH)),
        ),
        (
            "result",
            or_dash(&one_line(&bytes_text(&task.result), DETAIL_WIDTH)),
        ),
    ];
    match &task.approval {
        None => fields.push(("approval", "-".to_owned())),
        Some(approval) => {
            fields.push(("approval", approval.action.clone()));
            fields.push((
                "  details",
                or_dash(&one_line(&bytes_text(&approval.details), DETAIL_WIDTH)),
            ));
            fields.push(("  requested", time_text(approval.requested_at.as_ref())));
            let decision = match decision_name(approval) {
                None => "awaiting a decision (tasks approve|reject ID --by NAME)".to_owned(),
                Some(decision) if task.state == proto::TaskState::InputRequired as i32 => {
                    format!(
                        "{decision} by {} at {}; parked until `tasks resume {}`",
                        approval.decided_by,
                        time_text(approval.decided_at.as_ref()),
                        task.task_id
                    )
                }
                Some(decision) => format!(
                    "{decision} by {} at {}",
                    approval.decided_by,
                    time_text(approval.decided_at.as_ref())
                ),
            };
            fields.push(("  decision", decision));
            if !approval.comment.is_empty() {
                fields.push(("  comment", one_line(&approval.comment, DETAIL_WIDTH)));
            }
        }
    }
    print_fields(&fields);
}

/// A table of tasks. Tasks awaiting approval get ACTION and DETAILS columns of their own;
/// a mixed list sums the approval or last error up in NOTE.
pub fn task_table(tasks: &[Task], awaiting_approval: bool) -> Table {
    if awaiting_approval {
        let mut table = Table::new(vec!["TASK_ID", "RUN", "ACTION", "REQUESTED", "DETAILS"]);
        for task in tasks {
            let (action, requested, details) = match &task.approval {
                Some(approval) => (
                    approval.action.clone(),
                    time_text(approval.requested_at.as_ref()),
                    one_line(&bytes_text(&approval.details), NOTE_WIDTH),
                ),
                None => (String::new(), String::new(), String::new()),
            };
            table.row(vec![
                task.task_id.clone(),
                task.run_id.clone(),
                or_dash(&action),
                or_dash(&requested),
                or_dash(&details),
            ]);
        }
        return table;
    }
    let mut table = Table::new(vec![
        "TASK_ID", "STATE", "RUN", "ATTEMPTS", "UPDATED", "NOTE",
    ]);
    for task in tasks {
        let note = match (&task.approval, task.last_error.is_empty()) {
            (Some(approval), _)
                if task.state == proto::TaskState::InputRequired as i32 || approval.decided =>
            {
                approval_summary(approval)
            }
            (_, false) => format!("error: {}", last_error_text(task)),
            _ => String::new(),
        };
        table.row(vec![
            task.task_id.clone(),
            state_name(task.state),
            task.run_id.clone(),
            format!("{}/{}", task.attempts_used, max_attempts(task)),
            time_text(task.updated_at.as_ref()),
            or_dash(&one_line(&note, NOTE_WIDTH)),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_print_as_their_short_lower_case_names() {
        assert_eq!(
            state_name(proto::TaskState::InputRequired as i32),
            "input_required"
        );
        assert_eq!(state_name(99), "unknown(99)");
    }

    #[test]
    fn an_awaiting_approval_names_the_action_and_its_details() {
        let approval = Approval {
            action: "send_email".to_owned(),
            details: b"{\"to\":\"bob\"}".to_vec(),
            ..Approval::default()
        };
        assert_eq!(
            approval_summary(&approval),
            "awaiting approval: send_email {\"to\":\"bob\"}"
        );
        assert_eq!(task_json(&Task::default())["approval"], Value::Null);
    }
}
