//! The console's stylesheet and script, compiled into the binary: no CDN, no build step, and
//! the console works offline.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");

/// `GET /assets/{name}`: one of the two files, cacheable for an hour.
pub async fn serve(Path(name): Path<String>) -> Response {
    let (content_type, body) = match name.as_str() {
        "console.css" => ("text/css; charset=utf-8", CSS),
        "console.js" => ("text/javascript; charset=utf-8", JS),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "private, max-age=3600"),
        ],
        body,
    )
        .into_response()
}
