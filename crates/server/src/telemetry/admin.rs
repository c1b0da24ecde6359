//! The server's admin port: the shared admin routes, with `/healthz` pinging the store.

use std::future::Future;
use std::sync::Arc;

use checkpointd_telemetry::admin::Readiness;
use tokio::net::TcpListener;

use crate::store::CheckpointStore;

/// Ready while the store answers a ping.
struct StorePing(Arc<dyn CheckpointStore>);

#[async_trait::async_trait]
impl Readiness for StorePing {
    async fn ready(&self) -> bool {
        self.0.ping().await.is_ok()
    }
}

/// Serves `/metrics` and `/healthz` on `listener` until `shutdown` resolves; without a store
/// `/healthz` answers as long as the process runs.
pub async fn serve(
    listener: TcpListener,
    registry: prometheus::Registry,
    store: Option<Arc<dyn CheckpointStore>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let readiness = store.map(|store| Arc::new(StorePing(store)) as Arc<dyn Readiness>);
    checkpointd_telemetry::admin::serve(listener, registry, readiness, shutdown).await
}
