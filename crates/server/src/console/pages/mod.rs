//! The console's pages, one module each, all the same shape: check the session, call the
//! services in-process ([`super::calls`]), render HTML ([`super::html`]).

pub mod inbox;
mod inbox_card;
pub mod integrity;
pub mod run;
mod run_parts;
pub mod runs;
pub mod task;
pub mod task_bulk;
mod task_states;
pub mod tasks;

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use tonic::Status;

use super::calls::http_status;
use super::gate::failure;
use super::html::page;
use super::session::Session;

/// `GET /`: the inbox, where most visits are headed.
pub async fn home() -> Redirect {
    Redirect::to("/inbox")
}

/// Any path the console does not serve.
pub async fn not_found() -> Response {
    failure(StatusCode::NOT_FOUND, "no such page")
}

/// The answer for a call the services refused: its HTTP status and its (client-safe) message.
pub fn refused(status: &Status) -> Response {
    failure(http_status(status), status.message())
}

/// A full page for `session`, with `current` marked in the navigation.
pub fn render(session: &Session, title: &str, current: &str, body: &str) -> Response {
    Html(page(title, Some(session), current, body)).into_response()
}
