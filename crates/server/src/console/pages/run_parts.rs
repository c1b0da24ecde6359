//! The sections of the run page, each read with its own call as the signed-in credential:
//! the timeline, a checkpoint's state and a diff of two, the message log, the tool journal.

use std::fmt::Write;

use tonic::Status;

use crate::console::Shared;
use crate::console::calls::request;
use crate::console::diff::{self, Line};
use crate::console::gate::Form;
use crate::console::html::{
    csrf_field, escape, message_list, pretty_bytes, pretty_text, url_part, when,
};
use crate::console::session::Session;
use crate::proto::checkpoint_service_server::CheckpointService;
use crate::proto::{self, JournalEntryKind};

/// Messages shown per page of the log.
const MESSAGES_PER_PAGE: u64 = 50;

/// The timeline (newest first, up to 200 checkpoints); returns the checkpoints listed.
pub async fn timeline(
    console: &Shared,
    session: &Session,
    run_id: &str,
    body: &mut String,
) -> Result<Vec<proto::CheckpointSummary>, Status> {
    let list = proto::ListCheckpointsRequest {
        run_id: run_id.to_owned(),
        page_size: 200,
        descending: true,
        ..Default::default()
    };
    let call = request(&session.context, "CheckpointService/ListCheckpoints", list)?;
    let listed = console
        .calls
        .checkpoints
        .list_checkpoints(call)
        .await?
        .into_inner();
    body.push_str("<h2>Checkpoints</h2><table><caption>Newest first</caption><thead><tr><th scope=col>Step</th><th scope=col>Validity</th><th scope=col>Quarantine</th><th scope=col>Pinned by</th><th scope=col>Label</th><th scope=col>Created</th><th scope=col>Epoch</th><th scope=col>Messages</th><th scope=col>Bytes</th><th scope=col>Checksum</th><th scope=col>Metadata</th></tr></thead><tbody>");
    for checkpoint in &listed.checkpoints {
        let validity = if checkpoint.valid {
            r#"<span class="status-good">valid</span>"#
        } else {
            r#"<span class="status-bad">CORRUPT</span>"#
        };
        let _ = write!(
            body,
            r#"<tr><td><a href="?step={step}">{step}</a></td><td>{validity}</td><td class="long">{quarantine}</td><td>{pins}</td><td>{label}</td><td>{created}</td><td>{epoch}</td><td>{messages}</td><td>{bytes}</td><td><code>{checksum}</code></td><td>{metadata}</td></tr>"#,
            step = checkpoint.step,
            quarantine = if checkpoint.valid {
                String::new()
            } else {
                escape(&super::integrity::reason_in_words(
                    &checkpoint.quarantine_reason,
                ))
            },
            pins = escape(&checkpoint.pinned_by.join(", ")),
            label = escape(&checkpoint.label),
            created = when(checkpoint.created_at.as_ref()),
            epoch = checkpoint.epoch,
            messages = checkpoint.message_count,
            bytes = checkpoint.size_bytes,
            checksum = escape(
                checkpoint
                    .checksum
                    .get(..16)
                    .unwrap_or(&checkpoint.checksum)
            ),
            metadata = metadata_text(&checkpoint.metadata),
        );
    }
    body.push_str("</tbody></table>");
    Ok(listed.checkpoints)
}

/// The chosen checkpoint's state, and the diff form with the diff when two are chosen.
pub async fn state_and_diff(
    console: &Shared,
    session: &Session,
    run_id: &str,
    checkpoints: &[proto::CheckpointSummary],
    query: &Form,
    body: &mut String,
) {
    let options = |chosen: Option<&String>| {
        let mut out = String::new();
        for checkpoint in checkpoints {
            let step = checkpoint.step.to_string();
            let mark = if chosen == Some(&step) {
                " selected"
            } else {
                ""
            };
            let _ = write!(out, r#"<option value="{step}"{mark}>{step}</option>"#);
        }
        out
    };
    // Without a choice, the two newest valid checkpoints: what the agent's last save changed.
    let mut valid = checkpoints.iter().filter(|checkpoint| checkpoint.valid);
    let (latest, previous) = (valid.next(), valid.next());
    let pick = |key: &str, default: Option<&proto::CheckpointSummary>| {
        query
            .get(key)
            .cloned()
            .or_else(|| default.map(|checkpoint| checkpoint.step.to_string()))
    };
    let (from_step, to_step) = if query.contains_key("from") || query.contains_key("to") {
        (pick("from", None), pick("to", None))
    } else {
        (pick("from", previous), pick("to", latest))
    };
    let _ = write!(
        body,
        r#"<h2 id="compare">Compare two checkpoints</h2><form method="get" action="/runs/{}#diff"><label for="from">From step</label> <select id="from" name="from">{}</select> <label for="to">to step</label> <select id="to" name="to">{}</select> <button type="submit">Compare</button></form>"#,
        url_part(run_id),
        options(from_step.as_ref()),
        options(to_step.as_ref()),
    );
    let parsed = |raw: &Option<String>| raw.as_ref().and_then(|raw| raw.parse::<i64>().ok());
    let step_of = |key: &str| query.get(key).and_then(|raw| raw.parse::<i64>().ok());
    if let (Some(from), Some(to)) = (parsed(&from_step), parsed(&to_step)) {
        let old = state_at(console, session, run_id, from).await;
        let new = state_at(console, session, run_id, to).await;
        match (old, new) {
            (Ok(old), Ok(new)) => {
                let _ = write!(
                    body,
                    "<h3 id=\"diff\">Step {from} → step {to}</h3>{}<pre aria-label=\"Difference\">",
                    metadata_pair(checkpoints, from, to),
                );
                for line in diff::lines(&old, &new) {
                    let _ = match line {
                        Line::Same(text) => writeln!(body, "  {}", escape(text)),
                        Line::Removed(text) => {
                            writeln!(body, "<del class=\"diff-del\">- {}</del>", escape(text))
                        }
                        Line::Added(text) => {
                            writeln!(body, "<ins class=\"diff-add\">+ {}</ins>", escape(text))
                        }
                    };
                }
                body.push_str("</pre>");
            }
            (Err(status), _) | (_, Err(status)) => {
                let _ = write!(
                    body,
                    "<p class=\"notice error\">Cannot compare: {}</p>",
                    escape(status.message())
                );
            }
        }
    }
    if let Some(step) = step_of("step") {
        let _ = write!(body, "<h2>State at step {step}</h2>");
        match state_at(console, session, run_id, step).await {
            Ok(state) => {
                let _ = write!(body, "<pre>{}</pre>", escape(&state));
            }
            Err(status) => {
                let _ = write!(
                    body,
                    "<p class=\"notice error\">Cannot read step {step}: {}</p>",
                    escape(status.message())
                );
            }
        }
    }
}

/// One checkpoint's state as readable text (pretty JSON when it is JSON).
async fn state_at(
    console: &Shared,
    session: &Session,
    run_id: &str,
    step: i64,
) -> Result<String, Status> {
    let load = proto::LoadAtStepRequest {
        run_id: run_id.to_owned(),
        step,
        // Only the state is wanted: skip the whole message log.
        message_offset: u64::MAX,
        ..Default::default()
    };
    let call = request(&session.context, "CheckpointService/LoadAtStep", load)?;
    let loaded = console
        .calls
        .checkpoints
        .load_at_step(call)
        .await?
        .into_inner();
    Ok(pretty_text(&loaded.checkpoint.unwrap_or_default().state))
}

/// One page of the latest valid checkpoint's message log.
pub async fn messages(
    console: &Shared,
    session: &Session,
    run_id: &str,
    count: u64,
    query: &Form,
    body: &mut String,
) {
    let offset = query
        .get("messages")
        .and_then(|raw| raw.parse::<u64>().ok())
        .unwrap_or(0);
    let _ = write!(body, "<h2 id=\"messages\">Messages</h2>");
    let load = proto::LoadLatestRequest {
        run_id: run_id.to_owned(),
        message_offset: offset,
        ..Default::default()
    };
    let loaded = match request(&session.context, "CheckpointService/LoadLatest", load) {
        Ok(call) => console.calls.checkpoints.load_latest(call).await,
        Err(status) => Err(status),
    };
    let checkpoint = match loaded {
        Ok(answer) => answer.into_inner().checkpoint.unwrap_or_default(),
        Err(status) => {
            let _ = write!(
                body,
                "<p class=\"notice error\">Cannot read the messages: {}</p>",
                escape(status.message())
            );
            return;
        }
    };
    let shown = checkpoint.messages.len().min(MESSAGES_PER_PAGE as usize);
    body.push_str(&message_list(offset + 1, &checkpoint.messages[..shown]));
    let link = |to: u64, label: &str| {
        format!(
            r##"<a href="/runs/{}?messages={to}#messages">{label}</a> "##,
            url_part(run_id)
        )
    };
    body.push_str("<p>");
    if offset > 0 {
        body.push_str(&link(
            offset.saturating_sub(MESSAGES_PER_PAGE),
            "Earlier messages",
        ));
    }
    if offset + MESSAGES_PER_PAGE < count {
        body.push_str(&link(offset + MESSAGES_PER_PAGE, "Later messages"));
    }
    body.push_str("</p>");
}

/// The tool journal: entries, calls in doubt or corrupt with their repair forms, and the
/// repairs already made.
pub async fn journal(
    console: &Shared,
    session: &Session,
    run_id: &str,
    body: &mut String,
) -> Result<(), Status> {
    let call = request(
        &session.context,
        "CheckpointService/GetJournal",
        proto::GetJournalRequest {
            run_id: run_id.to_owned(),
        },
    )?;
    let journal = console
        .calls
        .checkpoints
        .get_journal(call)
        .await?
        .into_inner();
    body.push_str(r#"<h2 id="journal">Tool journal</h2>"#);
    body.push_str("<table><thead><tr><th scope=col>Seq</th><th scope=col>Kind</th><th scope=col>Call</th><th scope=col>Tool</th><th scope=col>Step</th><th scope=col>Status</th><th scope=col>Output</th><th scope=col>Recorded</th></tr></thead><tbody>");
    for entry in &journal.entries {
        let kind = if entry.kind == JournalEntryKind::Intent as i32 {
            "intent"
        } else {
            "result"
        };
        let status = match (entry.corrupt, entry.is_error) {
            (true, _) => r#"<span class="status-bad">CORRUPT</span>"#,
            (false, true) => "tool error",
            (false, false) => "ok",
        };
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{kind}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{status}</td><td><pre>{}</pre></td><td>{}</td></tr>",
            entry.seq,
            escape(&entry.call_id),
            escape(&entry.tool_name),
            entry.step,
            pretty_bytes(&entry.output),
            when(entry.recorded_at.as_ref()),
        );
    }
    body.push_str("</tbody></table>");
    let csrf = csrf_field(session);
    let action = format!("/runs/{}/repair", url_part(run_id));
    if !journal.in_doubt.is_empty() || !journal.corrupt_call_ids.is_empty() {
        body.push_str("<h3>Needs a decision</h3><ul>");
    }
    for call in &journal.in_doubt {
        // `corrupt` says the call's entry is damaged, not which one: the journal's own rows
        // tell whether it is the recorded result or the intent.
        let state = match (call.corrupt, corrupt_kind(&journal.entries, &call.call_id)) {
            (false, _) => "in doubt (intent without a result)",
            (true, Some(JournalEntryKind::Result)) => {
                "corrupt result (its recorded output fails its checksum)"
            }
            (true, Some(_)) => "corrupt intent",
            (true, None) => "corrupt journal entry",
        };
        let _ = write!(
            body,
            r#"<li><code>{call_id}</code> {tool} at step {step}: <strong>{state}</strong>
<div class="actions"><form method="post" action="{action}">{csrf}<input type="hidden" name="call_id" value="{call_id}"><input type="hidden" name="action" value="mark_done"><label for="out-{call_id}">Output to record</label><textarea id="out-{call_id}" name="output" rows="2" cols="50"></textarea><button type="submit">Mark done</button></form>
<form method="post" action="{action}" data-confirm="Drop this call's entry? It will run again.">{csrf}<input type="hidden" name="call_id" value="{call_id}"><input type="hidden" name="action" value="drop"><button type="submit">Drop</button></form></div></li>"#,
            call_id = escape(&call.call_id),
            tool = escape(&call.tool_name),
            step = call.step,
        );
    }
    for call_id in &journal.corrupt_call_ids {
        let _ = write!(
            body,
            r#"<li><code>{call_id}</code>: <strong>corrupt result</strong> <form method="post" action="{action}" data-confirm="Drop this corrupt entry? The call will run again.">{csrf}<input type="hidden" name="call_id" value="{call_id}"><input type="hidden" name="action" value="drop"><button type="submit">Drop</button></form></li>"#,
            call_id = escape(call_id),
        );
    }
    if !journal.in_doubt.is_empty() || !journal.corrupt_call_ids.is_empty() {
        body.push_str("</ul>");
    }
    if !journal.actions.is_empty() {
        body.push_str("<h3>Repairs made</h3><table><thead><tr><th scope=col>Call</th><th scope=col>Action</th><th scope=col>By</th><th scope=col>When</th><th scope=col>Detail</th></tr></thead><tbody>");
        for action in &journal.actions {
            let _ = write!(
                body,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&action.call_id),
                escape(&action.action),
                escape(&action.actor),
                when(action.acted_at.as_ref()),
                escape(&action.detail),
            );
        }
        body.push_str("</tbody></table>");
    }
    Ok(())
}

/// The kind of `call_id`'s corrupt journal entry: a result when any of its corrupt rows is
/// one (that is what a resume would have replayed), else an intent.
fn corrupt_kind(entries: &[proto::JournalEntry], call_id: &str) -> Option<JournalEntryKind> {
    let corrupt = entries
        .iter()
        .filter(|entry| entry.call_id == call_id && entry.corrupt);
    let mut kind = None;
    for entry in corrupt {
        if entry.kind == JournalEntryKind::Intent as i32 {
            kind.get_or_insert(JournalEntryKind::Intent);
        } else {
            return Some(JournalEntryKind::Result);
        }
    }
    kind
}

/// A checkpoint's metadata as `key=value` pairs by key, escaped; a dash when it has none.
fn metadata_text(metadata: &std::collections::HashMap<String, String>) -> String {
    if metadata.is_empty() {
        return "—".to_owned();
    }
    let mut pairs: Vec<_> = metadata.iter().collect();
    pairs.sort();
    let mut out = String::from(r#"<ul class="metadata">"#);
    for (key, value) in pairs {
        let _ = write!(
            out,
            "<li><code>{}</code>={}</li>",
            escape(key),
            escape(value)
        );
    }
    out.push_str("</ul>");
    out
}

/// The label and metadata of the two compared checkpoints, side by side above their diff.
fn metadata_pair(checkpoints: &[proto::CheckpointSummary], from: i64, to: i64) -> String {
    let of = |step: i64| {
        checkpoints
            .iter()
            .find(|checkpoint| checkpoint.step == step)
            .map_or("—".to_owned(), |checkpoint| {
                format!(
                    "label {}; {}",
                    if checkpoint.label.is_empty() {
                        "none".to_owned()
                    } else {
                        escape(&checkpoint.label)
                    },
                    metadata_text(&checkpoint.metadata)
                )
            })
    };
    format!(
        r#"<dl class="compared"><dt>Step {from}</dt><dd>{}</dd><dt>Step {to}</dt><dd>{}</dd></dl>"#,
        of(from),
        of(to)
    )
}
