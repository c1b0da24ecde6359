//! Integrity: verify every checkpoint of the tenant (ValidateTenant) and show what was found
//! corrupt and quarantined.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use std::fmt::Write;
use tokio_stream::StreamExt;

use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::changing;
use crate::console::html::{csrf_field, escape, url_part};
use crate::console::session::Session;
use crate::proto;
use crate::proto::checkpoint_service_server::CheckpointService;

fn form(session: &Session) -> String {
    format!(
        r#"<p>Verification reads every checkpoint of tenant <strong>{}</strong>, checks its checksum and quarantines the corrupt ones, so recovery skips them.</p><form method="post" action="/integrity">{}<button type="submit">Verify the tenant now</button></form>"#,
        escape(session.context.tenant.as_str()),
        csrf_field(session)
    )
}

/// `GET /integrity`.
pub async fn show(session: Session) -> Response {
    render(&session, "Integrity", "Integrity", &form(&session))
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
            r#"<tr><td><a href="/runs/{}">{}</a></td><td>{}</td><td><span class="status-bad">CORRUPT</span></td><td>{}</td><td>{}</td></tr>"#,
            url_part(&item.run_id),
            escape(&item.run_id),
            verdict.step,
            escape(&verdict.reason),
            if verdict.quarantined {
                "quarantined"
            } else {
                "not quarantined"
            },
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
            "<table><caption>Corrupt checkpoints</caption><thead><tr><th scope=col>Run</th><th scope=col>Step</th><th scope=col>Verdict</th><th scope=col>Reason</th><th scope=col>Quarantine</th></tr></thead><tbody>{rows}</tbody></table>"
        );
    }
    render(&session, "Integrity", "Integrity", &page)
}
