//! The admin HTTP port: `/metrics` in Prometheus text and `/healthz`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;

/// Longest `/healthz` waits for a probe before it answers unavailable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// What `/healthz` asks before it answers ok: the server pings its store, a worker has none.
#[async_trait::async_trait]
pub trait Readiness: Send + Sync {
    /// True when the process can do its work.
    async fn ready(&self) -> bool;
}

/// What the admin routes read.
#[derive(Clone)]
struct Admin {
    registry: prometheus::Registry,
    /// Without a probe `/healthz` answers as long as the process runs.
    readiness: Option<Arc<dyn Readiness>>,
}

/// Serves the admin routes on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    registry: prometheus::Registry,
    readiness: Option<Arc<dyn Readiness>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = Router::new()
        .route("/metrics", get(render_metrics))
        .route("/healthz", get(health))
        .with_state(Admin {
            registry,
            readiness,
        });
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

async fn render_metrics(State(admin): State<Admin>) -> impl IntoResponse {
    match prometheus::TextEncoder::new().encode_to_string(&admin.registry.gather()) {
        Ok(text) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, prometheus::TEXT_FORMAT)],
            text,
        ),
        Err(error) => {
            tracing::warn!(%error, "cannot render metrics");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::CONTENT_TYPE, "text/plain")],
                "cannot render metrics\n".to_owned(),
            )
        }
    }
}

async fn health(State(admin): State<Admin>) -> (StatusCode, &'static str) {
    let Some(readiness) = admin.readiness else {
        return (StatusCode::OK, "ok\n");
    };
    match tokio::time::timeout(PROBE_TIMEOUT, readiness.ready()).await {
        Ok(true) => (StatusCode::OK, "ok\n"),
        _ => (StatusCode::SERVICE_UNAVAILABLE, "store unreachable\n"),
    }
}
