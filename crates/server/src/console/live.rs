//! Live updates: Server-Sent Events streams that tell an open page something changed, so the
//! inbox and a run page refresh themselves (console.js) without a reload. Each stream is the
//! gRPC watch stream itself (`WatchTasks`, `WatchRun`), called in-process with the session's
//! context after the same role check, and it ends when the session expires or its key is
//! revoked.

use std::convert::Infallible;
use std::pin::pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use super::Shared;
use super::calls::{http_status, request};
use super::gate::{Form, Query, signed_in_passively};
use super::html::{escape, url_part};
use super::session::Session;
use crate::grpc::NotificationApi;
use crate::proto;
use crate::proto::notification_service_server::NotificationService;

/// How often an open stream checks that its session's key is still active (expiry is exact).
const SESSION_RECHECK: Duration = Duration::from_secs(5);
/// How far before a page was rendered the inbox stream starts looking: an event raised just
/// before the render costs one needless refresh, never a missed one, even across the clocks
/// of several servers.
const SINCE_MARGIN: Duration = Duration::from_secs(5);
/// A stream, or the plain answer that refuses it.
type Answer = Result<Response, Response>;
/// The event that tells the page its session is over (console.js then stops listening).
const SIGNED_OUT: &str = "signed-out";

/// The hidden element a page carries so console.js opens its stream: `url` is this module's
/// route for the page.
pub fn marker(url: &str) -> String {
    format!(r#"<span hidden data-live-url="{}"></span>"#, escape(url))
}

/// The inbox's stream URL for a page rendered now.
pub fn inbox_url(now: SystemTime) -> String {
    let since = now
        .checked_sub(SINCE_MARGIN)
        .unwrap_or(UNIX_EPOCH)
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    format!("/events/inbox?since={since}")
}

/// A run page's stream URL, for a page showing checkpoints up to `latest_step`.
pub fn run_url(run_id: &str, latest_step: Option<i64>) -> String {
    format!(
        "/events/runs/{}?after={}",
        url_part(run_id),
        latest_step.unwrap_or(0)
    )
}

/// `GET /events/inbox?since=MILLIS`: an event named after each task event of the tenant
/// (`task.input_required`, `task.approved`, ...) raised at or after `since` (Unix ms), or after
/// the browser's `Last-Event-ID` when it reconnects.
pub async fn inbox(
    State(console): State<Shared>,
    headers: HeaderMap,
    Query(query): Query,
) -> Response {
    inbox_stream(console, headers, query)
        .await
        .unwrap_or_else(|refusal| refusal)
}

async fn inbox_stream(console: Shared, headers: HeaderMap, query: Form) -> Answer {
    let (session, notifications) = watcher(&console, &headers).await?;
    let resumed = last_event_id(&headers);
    let since = match (resumed, query.get("since")) {
        (Some(_), _) | (None, None) => UNIX_EPOCH,
        (None, Some(raw)) => {
            let millis = raw
                .parse::<u64>()
                .map_err(|_| bad_request("since must be Unix milliseconds"))?;
            UNIX_EPOCH + Duration::from_millis(millis)
        }
    };
    let watch = proto::WatchTasksRequest {
        after_sequence: resumed.unwrap_or(0),
    };
    let call = request(&session.context, "NotificationService/WatchTasks", watch)
        .map_err(|status| refused(&status))?;
    let events = notifications
        .watch_tasks(call)
        .await
        .map_err(|status| refused(&status))?
        .into_inner();
    let items = events.filter_map(move |item| match item {
        Ok(event) if raised_at(&event) < since => None,
        Ok(event) => Some(Ok(SseEvent::default()
            .event(event.event_type)
            .id(event.sequence.to_string())
            .data(event.task_id))),
        Err(status) => Some(Err(status)),
    });
    Ok(guarded(console, headers, session, items))
}

/// `GET /events/runs/{run_id}?after=STEP`: a `checkpoint` event (its data the step) for each
/// checkpoint of the run saved above `after`, or above the browser's `Last-Event-ID`.
pub async fn run(
    State(console): State<Shared>,
    Path(run_id): Path<String>,
    headers: HeaderMap,
    Query(query): Query,
) -> Response {
    run_stream(console, run_id, headers, query)
        .await
        .unwrap_or_else(|refusal| refusal)
}

async fn run_stream(console: Shared, run_id: String, headers: HeaderMap, query: Form) -> Answer {
    let (session, notifications) = watcher(&console, &headers).await?;
    let after = match (last_event_id(&headers), query.get("after")) {
        (Some(step), _) => step as i64,
        (None, None) => 0,
        (None, Some(raw)) => raw
            .parse::<i64>()
            .map_err(|_| bad_request("after must be a step number"))?,
    };
    let watch = proto::WatchRunRequest {
        run_id,
        after_step: after,
    };
    let call = request(&session.context, "NotificationService/WatchRun", watch)
        .map_err(|status| refused(&status))?;
    let checkpoints = notifications
        .watch_run(call)
        .await
        .map_err(|status| refused(&status))?
        .into_inner();
    let items = checkpoints.map(|item| {
        item.map(|saved| {
            let step = saved.checkpoint.map_or(0, |summary| summary.step);
            SseEvent::default()
                .event("checkpoint")
                .id(step.to_string())
                .data(step.to_string())
        })
    });
    Ok(guarded(console, headers, session, items))
}

/// The session a stream is for and the watch streams it calls, or the refusal to give.
async fn watcher(
    console: &Shared,
    headers: &HeaderMap,
) -> Result<(Session, NotificationApi), Response> {
    let session = signed_in_passively(console, headers)
        .await
        .map_err(|_| not_signed_in())?;
    let notifications = console.calls.notifications.clone().ok_or_else(not_served)?;
    Ok((session, notifications))
}

/// Forwards `items` to the browser until the session expires, its key is revoked, the watch
/// fails or the browser goes away; the first two end with a [`SIGNED_OUT`] event.
fn guarded<S>(console: Shared, headers: HeaderMap, session: Session, items: S) -> Response
where
    S: tokio_stream::Stream<Item = Result<SseEvent, Status>> + Send + 'static,
{
    let (sender, receiver) = mpsc::channel::<Result<SseEvent, Infallible>>(16);
    tokio::spawn(async move {
        let mut items = pin!(items);
        let until = |at: SystemTime| at.duration_since(SystemTime::now()).unwrap_or_default();
        let mut expiry = pin!(tokio::time::sleep(until(session.expires_at)));
        let mut recheck = tokio::time::interval(SESSION_RECHECK);
        recheck.reset();
        let over = SseEvent::default().event(SIGNED_OUT).data("sign in again");
        loop {
            tokio::select! {
                item = items.next() => match item {
                    Some(Ok(event)) => {
                        if sender.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                    Some(Err(status)) => {
                        tracing::debug!(%status, "console live stream ended by its watch");
                        return;
                    }
                    None => return,
                },
                // The person's requests may have slid the expiry since: look again, and
                // end only a session that has really ended.
                () = &mut expiry => match signed_in_passively(&console, &headers).await {
                    Ok(now) => expiry
                        .as_mut()
                        .reset(tokio::time::Instant::now() + until(now.expires_at)),
                    Err(_) => {
                        let _ = sender.send(Ok(over)).await;
                        return;
                    }
                },
                _ = recheck.tick() => {
                    if signed_in_passively(&console, &headers).await.is_err() {
                        let _ = sender.send(Ok(over)).await;
                        return;
                    }
                }
                () = sender.closed() => return,
            }
        }
    });
    Sse::new(ReceiverStream::new(receiver))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// When a task event was raised.
fn raised_at(event: &proto::WatchTasksResponse) -> SystemTime {
    event.created_at.as_ref().map_or(UNIX_EPOCH, |at| {
        UNIX_EPOCH
            + Duration::from_secs(at.seconds.max(0) as u64)
            + Duration::from_nanos(at.nanos.max(0) as u64)
    })
}

/// The `Last-Event-ID` a reconnecting browser sends: the last id this stream gave it.
fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse().ok())
}

/// A stream cannot redirect to the sign-in page (EventSource would read the page as a broken
/// stream), so it says 401 and console.js stops listening.
fn not_signed_in() -> Response {
    (StatusCode::UNAUTHORIZED, "sign in to the console first").into_response()
}

fn not_served() -> Response {
    (
        StatusCode::NOT_IMPLEMENTED,
        "this server serves no notifications",
    )
        .into_response()
}

fn bad_request(message: &'static str) -> Response {
    (StatusCode::BAD_REQUEST, message).into_response()
}

fn refused(status: &Status) -> Response {
    (http_status(status), status.message().to_owned()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inbox_stream_starts_a_margin_before_the_page_was_rendered() {
        let rendered = UNIX_EPOCH + Duration::from_millis(1_000_000);
        assert_eq!(inbox_url(rendered), "/events/inbox?since=995000");
    }

    #[test]
    fn a_run_stream_starts_after_the_latest_step_the_page_shows() {
        assert_eq!(run_url("a b", Some(7)), "/events/runs/a%20b?after=7");
        assert_eq!(run_url("r", None), "/events/runs/r?after=0");
    }

    #[test]
    fn a_reconnecting_browser_resumes_after_its_last_event_id() {
        let mut headers = HeaderMap::new();
        assert_eq!(last_event_id(&headers), None);
        headers.insert("last-event-id", "42".parse().unwrap());
        assert_eq!(last_event_id(&headers), Some(42));
    }

    #[test]
    fn the_marker_escapes_its_url() {
        assert_eq!(
            marker("/events/runs/x?after=1&y"),
            r#"<span hidden data-live-url="/events/runs/x?after=1&amp;y"></span>"#
        );
    }
}
