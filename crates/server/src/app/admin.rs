//! The server's admin port: the shared admin routes, with `/healthz` pinging the store through
//! the engine.

use std::future::Future;
use std::sync::Arc;

use checkpointd_telemetry::admin::Readiness;
use tokio::net::TcpListener;

use crate::service::Engine;

/// Ready while the store answers a ping.
struct StorePing(Engine);

#[async_trait::async_trait]
impl Readiness for StorePing {
    async fn ready(&self) -> bool {
        self.0.ping().await.is_ok()
    }
}

/// Serves `/metrics` and `/healthz` on `listener` until `shutdown` resolves.
pub(super) async fn serve(
    listener: TcpListener,
    registry: prometheus::Registry,
    engine: Engine,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let readiness: Arc<dyn Readiness> = Arc::new(StorePing(engine));
    checkpointd_telemetry::admin::serve(listener, registry, Some(readiness), shutdown).await
}
