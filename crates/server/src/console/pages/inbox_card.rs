//! One inbox task as a compact card: what it asks, about which step, how long it has waited,
//! what approving will do, and one comment box with Approve and Reject, in view without
//! scrolling; the arguments and the run's last messages are kept short or folded away.
//! The card's element is `#task-<id>`, a stable key for live patching.

use std::fmt::Write;
use std::time::{Duration, SystemTime};

use crate::console::Shared;
use crate::console::calls::request;
use crate::console::html::{csrf_field, escape, message_list, url_part, when};
use crate::console::session::Session;
use crate::proto;
use crate::proto::checkpoint_service_server::CheckpointService;

/// How many of a run's latest messages a card shows for context.
const LAST_MESSAGES: u64 = 3;

/// The card of one waiting `task`; `back` is where its forms return to (`inbox?<view>`).
pub async fn card(
    console: &Shared,
    session: &Session,
    task: &proto::Task,
    back: &str,
    now: SystemTime,
) -> String {
    let approval = task.approval.clone().unwrap_or_default();
    let id = escape(&task.task_id);
    let step = match requested_step(&approval) {
        Some(step) => format!(r#"<span class="step">step {step}</span>"#),
        None => r#"<span class="step">step not named</span>"#.to_owned(),
    };
    let waited = approval
        .requested_at
        .and_then(|at| SystemTime::try_from(at).ok())
        .and_then(|at| now.duration_since(at).ok())
        .map_or_else(String::new, |waited| {
            format!(" · waiting {}", short_duration(waited))
        });
    let mut out = format!(
        r#"<article id="task-{id}" class="task" aria-labelledby="task-{id}-title">
<h2 id="task-{id}-title">{action}</h2>
<p class="meta">{step} · run <a href="/runs/{run_link}">{run}</a> · asked <time title="{requested}">{requested}</time>{waited} · attempt {attempt} · <small>task {id}</small></p>
<pre class="args" aria-label="Arguments">{args}</pre>"#,
        action = escape(&approval.action),
        run_link = url_part(&task.run_id),
        run = escape(&task.run_id),
        requested = when(approval.requested_at.as_ref()),
        attempt = task.attempt,
        args = escape(&compact_text(&approval.details)),
    );
    out.push_str(&context(console, session, &task.run_id).await);
    let back = escape(back);
    let csrf = csrf_field(session);
    let link = url_part(&task.task_id);
    if approval.decided {
        let verdict = if approval.approved {
            "Approved"
        } else {
            "Rejected"
        };
        let _ = write!(
            out,
            r#"<p class="decided"><strong>{verdict}</strong> by {} at {}: {}</p>"#,
            decider(console, &approval.decided_by).await,
            when(approval.decided_at.as_ref()),
            escape(&approval.comment),
        );
        // Decided but parked (enqueued with auto_resume_hitl false): it waits for a resume.
        let _ = write!(
            out,
            r#"<p class="effect">Parked: it runs again only when resumed (ResumeTask).</p><form method="post" action="/tasks/{link}/resume">{csrf}<input type="hidden" name="back" value="{back}"><button type="submit">Resume the task</button></form>"#,
        );
    } else {
        let effect = if task.auto_resume_hitl {
            "Approving or rejecting resumes the task at once: a worker picks it up."
        } else {
            "Approving or rejecting parks the task until someone resumes it (ResumeTask)."
        };
        let _ = write!(
            out,
            r#"<p class="effect">{effect}</p>
<form method="post" action="/tasks/{link}/approve" class="decision">{csrf}<input type="hidden" name="back" value="{back}">
<label for="comment-{id}">Comment</label>
<textarea id="comment-{id}" name="comment" rows="1"></textarea>
<button type="submit">Approve</button>
<button type="submit" formaction="/tasks/{link}/reject" class="reject">Reject</button></form>"#,
        );
    }
    out.push_str("</article>");
    out
}

/// The step an approval request is about, as the request names it: a `"step"` number in its
/// JSON details (the runner's in-doubt requests and the demo agent put it there), else
/// `step-N` or `step N` in its action. The run's latest checkpoint is the step *before* the
/// one that asked (a step checkpoints what it started from), which is why the inbox showed
/// "step 1" for step 2's email; it is shown apart, as the latest checkpoint.
pub fn requested_step(approval: &proto::Approval) -> Option<i64> {
    if let Ok(serde_json::Value::Object(details)) =
        serde_json::from_slice::<serde_json::Value>(&approval.details)
    {
        match details.get("step") {
            Some(serde_json::Value::Number(n)) => return n.as_i64(),
            Some(serde_json::Value::String(s)) => return s.parse().ok(),
            _ => {}
        }
    }
    let action = approval.action.as_str();
    action.match_indices("step").find_map(|(at, _)| {
        let rest = action[at + 4..].strip_prefix(['-', ' ', '_'])?;
        let digits: &str = &rest[..rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len())];
        digits.parse().ok()
    })
}

/// `key:<id>` as the key's name (and its id, shortened), when the key has one; any other
/// decider (a JWT's subject) as recorded. Escaped markup.
pub(super) async fn decider(console: &Shared, decided_by: &str) -> String {
    let Some(id) = decided_by.strip_prefix("key:") else {
        return escape(decided_by);
    };
    match console.keys.find_key(id).await {
        Ok(Some(key)) if !key.name.is_empty() => format!(
            r#"<span title="{}">{} (key {}…)</span>"#,
            escape(decided_by),
            escape(&key.name),
            escape(&id.chars().take(6).collect::<String>()),
        ),
        _ => escape(decided_by),
    }
}

/// Arguments on as few lines as they fit: JSON without its pretty-printing (the box wraps
/// it), anything else as text. The run page shows them in full.
fn compact_text(bytes: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(value) => value.to_string(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// A wait as people say it: seconds, minutes, hours or days, rounded down.
fn short_duration(waited: Duration) -> String {
    let secs = waited.as_secs();
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

/// The run's latest checkpoint and its last few messages, folded away; read as the session's
/// role would.
async fn context(console: &Shared, session: &Session, run_id: &str) -> String {
    match latest(console, session, run_id).await {
        Ok((step, first, messages)) => format!(
            r#"<details class="context"><summary>Latest checkpoint: step {step}; last messages</summary>{}</details>"#,
            message_list(first, &messages)
        ),
        Err(status) => format!(
            r#"<p class="context">No checkpoint readable ({})</p>"#,
            escape(status.message())
        ),
    }
}

async fn latest(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(action: &str, details: &str) -> proto::Approval {
        proto::Approval {
            action: action.into(),
            details: details.as_bytes().to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn the_step_is_the_one_the_request_names_not_the_latest_checkpoint() {
        assert_eq!(
            requested_step(&approval("send_email step-2", r#"{"to":"ops","step":2}"#)),
            Some(2)
        );
        assert_eq!(
            requested_step(&approval("in_doubt step-7/send_email/0", "not json")),
            Some(7)
        );
        assert_eq!(requested_step(&approval("deploy step 12", "")), Some(12));
        assert_eq!(
            requested_step(&approval("deploy", r#"{"step":"4"}"#)),
            Some(4)
        );
        assert_eq!(requested_step(&approval("deploy_production", "{}")), None);
        assert_eq!(requested_step(&approval("stepwise", "")), None);
    }

    #[test]
    fn waits_read_in_the_largest_whole_unit() {
        assert_eq!(short_duration(Duration::from_secs(59)), "59 s");
        assert_eq!(short_duration(Duration::from_secs(150)), "2 min");
        assert_eq!(short_duration(Duration::from_secs(7300)), "2 h");
        assert_eq!(short_duration(Duration::from_secs(200_000)), "2 d");
    }
}
