//! Integrity: what the store already holds quarantined, shown on arrival (an operator sent here
//! by an `integrity.corrupt` webhook sees it without verifying anything), each with its reason
//! in words and the repair one click or one command away; and verification of every checkpoint
//! of the tenant (ValidateTenant) on request.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use std::fmt::Write;
use tokio_stream::StreamExt;
use tonic::Status;

use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::changing;
use crate::console::html::{csrf_field, escape, url_part, when};
use crate::console::session::Session;
use crate::proto;
use crate::proto::checkpoint_service_server::CheckpointService;

/// Most runs the arrival listing reads. The store keeps no tenant-wide index of quarantined
/// checkpoints, so the page walks the runs (one ListCheckpoints each); the cap bounds what one
/// page view costs, and the page says when it was reached.
const MAX_RUNS_SCANNED: usize = 500;

/// Most checkpoints of one run the listing reads, newest first.
const MAX_CHECKPOINTS_PER_RUN: u32 = 1000;

fn form(session: &Session) -> String {
    format!(
        r#"<p>Verification reads every checkpoint of tenant <strong>{}</strong>, checks its checksum and quarantines the corrupt ones, so recovery skips them.</p><form method="post" action="/integrity">{}<button type="submit">Verify the tenant now</button></form>"#,
        escape(session.context.tenant.as_str()),
        csrf_field(session)
    )
}

/// The first 12 characters of a hex digest, with an ellipsis when it was longer.
fn short(hex: &str) -> String {
    match hex.get(..12) {
        Some(head) if hex.len() > 12 => format!("{head}…"),
        _ => hex.to_owned(),
    }
}

/// A quarantine or verification reason as an operator reads it: the store records the
/// verifier's text (`checksum mismatch: stored X, computed Y`), which names no cause.
pub fn reason_in_words(reason: &str) -> String {
    if let Some(rest) = reason.strip_prefix("checksum mismatch: stored ")
        && let Some((stored, computed)) = rest.split_once(", computed ")
    {
        return format!(
            "stored checksum does not match its bytes (expected {}, actual {}): the state, messages or tool results changed after the save",
            short(stored),
            short(computed)
        );
    }
    if reason.starts_with("covers tool journal entry") {
        return format!("it {reason}: restoring it would replay a damaged tool result");
    }
    if reason.is_empty() {
        return "corrupt (no reason recorded)".to_owned();
    }
    reason.to_owned()
}

/// `run` as one shell word, quoted when it holds anything a shell would read.
fn shell_word(run: &str) -> String {
    let plain = run
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.:/@".contains(c));
    if plain && !run.is_empty() {
        run.to_owned()
    } else {
        format!("'{}'", run.replace('\'', r"'\''"))
    }
}

/// The repairs for a quarantined checkpoint of `run`: the run page (where its journal is
/// settled and its checkpoints compared) and the CLI command that drops the quarantined ones,
/// which the console does not offer.
fn next_step(run: &str, reason: &str) -> String {
    let page = if reason.starts_with("covers tool journal entry") {
        format!(
            r#"<a href="/runs/{}#journal">Settle the corrupt journal entry</a>"#,
            url_part(run)
        )
    } else {
        format!(r#"<a href="/runs/{}">Open the run</a>"#, url_part(run))
    };
    format!(
        "{page}; then drop the quarantined checkpoints: <code>checkpointd runs drop-quarantined {}</code>",
        escape(&shell_word(run))
    )
}

/// One row of the arrival listing.
struct Quarantined {
    run_id: String,
    checkpoint: proto::CheckpointSummary,
}

/// Every quarantined checkpoint of the first [`MAX_RUNS_SCANNED`] runs; whether the cap cut
/// the walk short.
async fn quarantined(
    console: &Shared,
    session: &Session,
) -> Result<(Vec<Quarantined>, usize, bool), Status> {
    let (mut found, mut scanned, mut token) = (Vec::new(), 0usize, String::new());
    loop {
        let list = proto::ListRunsRequest {
            page_size: 500,
            page_token: token,
            run_id_prefix: String::new(),
        };
        let call = request(&session.context, "CheckpointService/ListRuns", list)?;
        let page = console
            .calls
            .checkpoints
            .list_runs(call)
            .await?
            .into_inner();
        for run in page.runs {
            if scanned == MAX_RUNS_SCANNED {
                return Ok((found, scanned, true));
            }
            scanned += 1;
            // The head carries no quarantine count, so only a run without checkpoints is
            // skipped unread.
            if run.checkpoint_count == 0 {
                continue;
            }
            let list = proto::ListCheckpointsRequest {
                run_id: run.run_id.clone(),
                page_size: MAX_CHECKPOINTS_PER_RUN,
                descending: true,
                ..Default::default()
            };
            let call = request(&session.context, "CheckpointService/ListCheckpoints", list)?;
            let checkpoints = console
                .calls
                .checkpoints
                .list_checkpoints(call)
                .await?
                .into_inner()
                .checkpoints;
            found.extend(
                checkpoints
                    .into_iter()
                    .filter(|checkpoint| !checkpoint.valid)
                    .map(|checkpoint| Quarantined {
                        run_id: run.run_id.clone(),
                        checkpoint,
                    }),
            );
        }
        if page.next_page_token.is_empty() {
            return Ok((found, scanned, false));
        }
        token = page.next_page_token;
    }
}

/// The arrival listing as HTML.
async fn listing(console: &Shared, session: &Session) -> Result<String, Status> {
    let (found, scanned, capped) = quarantined(console, session).await?;
    let mut out = String::from(r#"<section id="quarantined"><h2>Quarantined now</h2>"#);
    if found.is_empty() {
        let _ = write!(
            out,
            "<p>No checkpoint is quarantined in the {scanned} run(s) read.</p>"
        );
    } else {
        let _ = write!(
            out,
            "<p>{} checkpoint(s) quarantined: recovery skips them and falls back to the newest valid one before them.</p>",
            found.len()
        );
        out.push_str("<table><caption>Quarantined checkpoints, by run, newest step first</caption><thead><tr><th scope=col>Run</th><th scope=col>Step</th><th scope=col>Saved</th><th scope=col>Why</th><th scope=col>Next step</th></tr></thead><tbody>");
        for item in &found {
            let _ = write!(
                out,
                r#"<tr data-key="{key}"><td><a href="/runs/{run_url}">{run}</a></td><td><a href="/runs/{run_url}?step={step}">{step}</a></td><td>{saved}</td><td class="long">{why}</td><td class="long">{next}</td></tr>"#,
                key = escape(&format!("{}/{}", item.run_id, item.checkpoint.step)),
                run_url = url_part(&item.run_id),
                run = escape(&item.run_id),
                step = item.checkpoint.step,
                saved = when(item.checkpoint.created_at.as_ref()),
                why = escape(&reason_in_words(&item.checkpoint.quarantine_reason)),
                next = next_step(&item.run_id, &item.checkpoint.quarantine_reason),
            );
        }
        out.push_str("</tbody></table>");
    }
    if capped {
        let _ = write!(
            out,
            "<p>Only the first {MAX_RUNS_SCANNED} runs (by id) were read; verify the tenant or use <code>checkpointd runs list</code> for the rest.</p>"
        );
    }
    out.push_str("<p>Corrupt tool journal entries are listed, with their repairs, on each run's page under Tool journal.</p></section>");
    Ok(out)
}

/// `GET /integrity`: what is quarantined already, and the verification form.
pub async fn show(State(console): State<Shared>, session: Session) -> Response {
    let listed = match listing(&console, &session).await {
        Ok(listed) => listed,
        Err(status) => return refused(&status),
    };
    let body = format!("{listed}{}", form(&session));
    render(&session, "Integrity", "Integrity", &body)
}

/// `POST /integrity`: runs the verification and shows every checkpoint that failed it.
pub async fn verify(State(console): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let session = match changing(&console, &headers, &body).await {
        Ok((session, _)) => session,
        Err(answer) => return answer,
    };
    let call = match request(
        &session.context,
        "CheckpointService/ValidateTenant",
        proto::ValidateTenantRequest { page_size: 0 },
    ) {
        Ok(call) => call,
        Err(status) => return refused(&status),
    };
    let mut stream = match console.calls.checkpoints.validate_tenant(call).await {
        Ok(answer) => answer.into_inner(),
        Err(status) => return refused(&status),
    };
    let (mut checked, mut rows) = (0u64, String::new());
    while let Some(item) = stream.next().await {
        let item = match item {
            Ok(item) => item,
            Err(status) => return refused(&status),
        };
        checked += 1;
        let verdict = item.verdict.unwrap_or_default();
        if verdict.valid {
            continue;
        }
        let _ = write!(
            rows,
            r#"<tr><td><a href="/runs/{}">{}</a></td><td>{}</td><td><span class="status-bad">CORRUPT</span></td><td class="long">{}</td><td>{}</td><td class="long">{}</td></tr>"#,
            url_part(&item.run_id),
            escape(&item.run_id),
            verdict.step,
            escape(&reason_in_words(&verdict.reason)),
            if verdict.quarantined {
                "quarantined"
            } else {
                "not quarantined"
            },
            next_step(&item.run_id, &verdict.reason),
        );
    }
    let mut page = form(&session);
    let _ = write!(
        page,
        "<h2>Result</h2><p>{checked} checkpoint(s) checked.</p>"
    );
    if rows.is_empty() {
        page.push_str("<p>Every checkpoint is intact.</p>");
    } else {
        let _ = write!(
            page,
            "<table><caption>Corrupt checkpoints</caption><thead><tr><th scope=col>Run</th><th scope=col>Step</th><th scope=col>Verdict</th><th scope=col>Reason</th><th scope=col>Quarantine</th><th scope=col>Next step</th></tr></thead><tbody>{rows}</tbody></table>"
        );
    }
    render(&session, "Integrity", "Integrity", &page)
}
