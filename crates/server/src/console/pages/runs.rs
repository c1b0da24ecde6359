//! The runs of the tenant, newest listing order as the store pages them, searchable by run id
//! prefix.

use axum::extract::State;
use axum::response::Response;
use std::fmt::Write;

use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::Query;
use crate::console::html::{escape, url_part, when};
use crate::console::session::Session;
use crate::proto;
use crate::proto::checkpoint_service_server::CheckpointService;

/// `GET /runs?prefix=P&page=TOKEN`.
pub async fn show(
    State(console): State<Shared>,
    session: Session,
    Query(query): Query,
) -> Response {
    let prefix = query.get("prefix").cloned().unwrap_or_default();
    let list = proto::ListRunsRequest {
        page_size: 50,
        page_token: query.get("page").cloned().unwrap_or_default(),
        run_id_prefix: prefix.clone(),
    };
    let listed = match request(&session.context, "CheckpointService/ListRuns", list) {
        Ok(call) => console.calls.checkpoints.list_runs(call).await,
        Err(status) => Err(status),
    };
    let listed = match listed {
        Ok(answer) => answer.into_inner(),
        Err(status) => return refused(&status),
    };
    let mut body = format!(
        r#"<form method="get" action="/runs" role="search"><label for="prefix">Run id starts with</label> <input type="search" id="prefix" name="prefix" value="{}"> <button type="submit">Search</button></form>"#,
        escape(&prefix)
    );
    body.push_str("<table><caption>Runs</caption><thead><tr><th scope=col>Run</th><th scope=col>Latest step</th><th scope=col>Latest valid step</th><th scope=col>Checkpoints</th><th scope=col>Messages</th><th scope=col>Tool results</th><th scope=col>Epoch</th><th scope=col>Updated</th></tr></thead><tbody>");
    let step = |step: Option<i64>| step.map_or("—".to_owned(), |step| step.to_string());
    for run in &listed.runs {
        let _ = write!(
            body,
            r#"<tr><td><a href="/runs/{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            url_part(&run.run_id),
            escape(&run.run_id),
            step(run.latest_step),
            step(run.latest_valid_step),
            run.checkpoint_count,
            run.message_count,
            run.tool_count,
            run.epoch,
            when(run.updated_at.as_ref()),
        );
    }
    body.push_str("</tbody></table>");
    if listed.runs.is_empty() {
        body.push_str("<p>No runs match.</p>");
    }
    if !listed.next_page_token.is_empty() {
        let _ = write!(
            body,
            r#"<p><a href="/runs?prefix={}&amp;page={}">Next page</a></p>"#,
            url_part(&prefix),
            url_part(&listed.next_page_token)
        );
    }
    render(&session, "Runs", "Runs", &body)
}
