//! One run: its head, its checkpoint timeline (validity, quarantines, pins), the state of a
//! chosen checkpoint as pretty JSON, the difference between two checkpoints, its message log
//! (paged) and its tool journal with the repairs (mark done, drop) and who made them.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use tonic::Status;

use super::run_parts::{journal, messages, state_and_diff, timeline};
use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::{Query, changing};
use crate::console::html::{escape, notice, url_part};
use crate::console::live;
use crate::console::session::Session;
use crate::proto;
use crate::proto::checkpoint_service_server::CheckpointService;

/// `GET /runs/{run_id}?step=S&from=A&to=B&messages=OFFSET`.
pub async fn show(
    State(console): State<Shared>,
    Path(run_id): Path<String>,
    session: Session,
    Query(query): Query,
) -> Response {
    match page(&console, &session, &run_id, &query).await {
        Ok(body) => render(&session, &format!("Run {run_id}"), "Runs", &body),
        Err(status) => refused(&status),
    }
}

async fn page(
    console: &Shared,
    session: &Session,
    run_id: &str,
    query: &crate::console::gate::Form,
) -> Result<String, Status> {
    let head = proto::GetRunRequest {
        run_id: run_id.to_owned(),
    };
    let call = request(&session.context, "CheckpointService/GetRun", head)?;
    let head = console
        .calls
        .checkpoints
        .get_run(call)
        .await?
        .into_inner()
        .run
        .unwrap_or_default();
    let mut body = String::new();
    if let Some(done) = query.get("done") {
        body.push_str(&notice("Done", done));
    }
    let step = |step: Option<i64>| step.map_or("none".to_owned(), |step| step.to_string());
    body.push_str(&format!(
        "<dl><dt>Run</dt><dd><code>{}</code></dd><dt>Latest step</dt><dd>{}</dd><dt>Latest valid step</dt><dd>{}</dd><dt>Epoch</dt><dd>{}</dd><dt>Messages</dt><dd>{}</dd><dt>Tool results</dt><dd>{}</dd></dl>",
        escape(&head.run_id),
        step(head.latest_step),
        step(head.latest_valid_step),
        head.epoch,
        head.message_count,
        head.tool_count,
    ));
    // The comparison (by default the previous checkpoint against the latest) comes first,
    // so its diff is in view on arrival; the timeline it chooses from follows.
    let mut listed = String::new();
    let checkpoints = timeline(console, session, run_id, &mut listed).await?;
    state_and_diff(console, session, run_id, &checkpoints, query, &mut body).await;
    body.push_str(&listed);
    messages(
        console,
        session,
        run_id,
        head.message_count,
        query,
        &mut body,
    )
    .await;
    journal(console, session, run_id, &mut body).await?;
    body.push_str(&live::marker(&live::run_url(run_id, head.latest_step)));
    Ok(body)
}

/// `POST /runs/{run_id}/repair`: settles a journal call (`action` = `mark_done` with an
/// `output`, or `drop`) as the signed-in credential, which the journal records as the actor.
pub async fn repair(
    State(console): State<Shared>,
    Path(run_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (session, fields) = match changing(&console, &headers, &body).await {
        Ok(checked) => checked,
        Err(answer) => return answer,
    };
    let repair = match fields.get("action").map(String::as_str) {
        Some("mark_done") => proto::repair_journal_request::Repair::MarkDoneOutput(
            fields
                .get("output")
                .cloned()
                .unwrap_or_default()
                .into_bytes(),
        ),
        Some("drop") => proto::repair_journal_request::Repair::Drop(true),
        _ => {
            return refused(&Status::invalid_argument(
                "action must be mark_done or drop",
            ));
        }
    };
    let call_id = fields.get("call_id").cloned().unwrap_or_default();
    let repaired = proto::RepairJournalRequest {
        run_id: run_id.clone(),
        call_id: call_id.clone(),
        // The server records the credential's identity; this names the console only without
        // authentication, which the console never runs with.
        actor: session.context.identity.subject.clone(),
        repair: Some(repair),
    };
    let outcome = match request(
        &session.context,
        "CheckpointService/RepairJournal",
        repaired,
    ) {
        Ok(call) => console.calls.checkpoints.repair_journal(call).await,
        Err(status) => Err(status),
    };
    match outcome {
        Ok(_) => Redirect::to(&format!(
            "/runs/{}?done={}",
            url_part(&run_id),
            url_part(&format!("call {call_id} repaired"))
        ))
        .into_response(),
        Err(status) => refused(&status),
    }
}
