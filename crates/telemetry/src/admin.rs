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

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_util::sync::CancellationToken;

    use super::*;

    struct Fixed(bool);

    #[async_trait::async_trait]
    impl Readiness for Fixed {
        async fn ready(&self) -> bool {
            self.0
        }
    }

    /// The status line of `GET /healthz` from an admin port with `readiness`.
    async fn healthz_status(readiness: Option<Arc<dyn Readiness>>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let server = tokio::spawn(serve(
            listener,
            prometheus::Registry::new(),
            readiness,
            stop.clone().cancelled_owned(),
        ));
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: admin\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        stop.cancel();
        server.await.unwrap().unwrap();
        response.lines().next().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn healthz_follows_the_readiness_probe_and_answers_ok_without_one() {
        assert_eq!(healthz_status(None).await, "HTTP/1.1 200 OK");
        assert_eq!(
            healthz_status(Some(Arc::new(Fixed(true)))).await,
            "HTTP/1.1 200 OK"
        );
        assert_eq!(
            healthz_status(Some(Arc::new(Fixed(false)))).await,
            "HTTP/1.1 503 Service Unavailable"
        );
    }
}
