//! The gRPC server: the checkpoint service, health and reflection on one listener.

mod checkpoint_service;
pub(crate) mod convert;
mod health;
mod retention_api;
mod task_convert;
mod task_service;
pub mod tenant;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;

pub use checkpoint_service::CheckpointApi;
pub use task_service::TaskApi;

use crate::engine::Engine;
use crate::maintenance::{Pruner, Reaper, RetentionSettings};
use crate::proto::checkpoint_service_server::CheckpointServiceServer;
use crate::proto::task_service_server::TaskServiceServer;
use crate::queue::{RetryPolicy, TaskQueue};

/// What the server serves: checkpoints always, the task queue when one is configured.
#[derive(Clone)]
pub struct Backends {
    pub engine: Engine,
    pub queue: Option<Arc<dyn TaskQueue>>,
    /// Whether the Redis cache is reachable, when one is configured; health reports it.
    pub cache_status: Option<tokio::sync::watch::Receiver<bool>>,
}

impl From<crate::store::Opened> for Backends {
    /// The store and its queue, with no cache.
    fn from(opened: crate::store::Opened) -> Self {
        Self {
            engine: Engine::new(opened.store),
            queue: Some(opened.queue),
            cache_status: None,
        }
    }
}

impl From<Engine> for Backends {
    /// Checkpoints only, with no task queue.
    fn from(engine: Engine) -> Self {
        Self {
            engine,
            queue: None,
            cache_status: None,
        }
    }
}

/// How the server treats requests and shutdown.
#[derive(Clone, Debug)]
pub struct ServerSettings {
    /// Largest request accepted; larger ones get `RESOURCE_EXHAUSTED`.
    pub max_request_bytes: usize,
    /// How long in-flight calls may run after shutdown begins.
    pub drain_timeout: Duration,
    /// How often the store is pinged to drive the health status.
    pub health_interval: Duration,
    /// The retry policy of tasks enqueued without one.
    pub retry_defaults: RetryPolicy,
    /// The lease of claims that name none.
    pub stale_threshold: Duration,
    /// Retention policy default and the background pruner's schedule.
    pub retention: RetentionSettings,
    /// Time between two passes of the reaper, which buries stale tasks on their final
    /// attempt; zero turns it off.
    pub reap_interval: Duration,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            max_request_bytes: 16 * 1024 * 1024,
            drain_timeout: Duration::from_secs(10),
            health_interval: Duration::from_secs(1),
            retry_defaults: RetryPolicy::default(),
            stale_threshold: Duration::from_secs(30),
            retention: RetentionSettings::default(),
            reap_interval: Duration::from_secs(5),
        }
    }
}

/// The fully qualified name health checks use for the checkpoint service.
pub const CHECKPOINT_SERVICE_NAME: &str = "checkpoint.v1.CheckpointService";

/// The health check name of the Redis cache: NOT_SERVING while Redis is unreachable, which
/// degrades the server (every read goes to the store) without taking it down.
pub const CACHE_SERVICE_NAME: &str = "checkpointd.cache";

/// Serves until `shutdown` resolves, then stops accepting and drains in-flight calls for at
/// most `settings.drain_timeout`.
pub async fn run(
    listener: TcpListener,
    backends: impl Into<Backends>,
    settings: ServerSettings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let Backends {
        engine,
        queue,
        cache_status,
    } = backends.into();
    let (reporter, health_service) = tonic_health::server::health_reporter();
    // The first status is known before the first request can ask for it.
    let healthy = health::check_store(engine.store(), &reporter, Duration::from_secs(2)).await;
    if !healthy {
        tracing::warn!("store unreachable at startup; health is NOT_SERVING");
    }
    let (stop_health, health_stopped) = tokio::sync::watch::channel(false);
    let cache_task = cache_status.map(|cache_up| {
        tokio::spawn(health::watch_cache(
            reporter.clone(),
            cache_up,
            health_stopped.clone(),
        ))
    });
    let health_task = tokio::spawn(health::watch_store(
        engine.store().clone(),
        reporter,
        settings.health_interval,
        healthy,
        health_stopped,
    ));

    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;

    // Requests a little over the limit still decode, so the service can answer them with
    // RESOURCE_EXHAUSTED and a clear message instead of a transport-level error.
    let decode_ceiling = settings
        .max_request_bytes
        .saturating_mul(2)
        .max(settings.max_request_bytes.saturating_add(1 << 20));
    // The pruner runs beside the server and stops when shutdown begins; an interrupted pass
    // leaves nothing half-done, since every batch is its own transaction.
    let stop_pruner = tokio_util::sync::CancellationToken::new();
    let pruner_task = tokio::spawn(
        Pruner::new(engine.clone(), settings.retention).run_periodically(stop_pruner.clone()),
    );
    // The reaper too, on the same stop token; each of its batches is one transaction.
    let reaper_task = queue.clone().map(|queue| {
        tokio::spawn(
            Reaper::new(queue, settings.reap_interval).run_periodically(stop_pruner.clone()),
        )
    });
    let pins = engine.store().clone();
    let checkpoints =
        CheckpointServiceServer::new(CheckpointApi::new(engine, settings.max_request_bytes))
            .max_decoding_message_size(decode_ceiling);

    let (began, shutdown_began) = tokio::sync::oneshot::channel::<()>();
    let signal = {
        let stop_pruner = stop_pruner.clone();
        async move {
            shutdown.await;
            tracing::info!("shutdown requested; draining in-flight calls");
            // NOT_SERVING first, so load balancers and health watchers move away while the
            // in-flight calls drain, instead of learning it when the server is gone.
            let _ = stop_health.send(true);
            stop_pruner.cancel();
            let _ = began.send(());
        }
    };
    let tasks = queue.map(|queue| {
        TaskServiceServer::new(TaskApi::new(
            queue,
            settings.retry_defaults,
            settings.stale_threshold,
            Some(pins),
        ))
        .max_decoding_message_size(decode_ceiling)
    });
    let serve = Server::builder()
        .layer(crate::telemetry::rpc_layer::RpcLayer)
        .add_service(health_service)
        .add_service(reflection)
        .add_service(checkpoints)
        .add_optional_service(tasks)
        // Nagle's algorithm would hold multi-segment replies for the client's delayed ACK (~40 ms).
        .serve_with_incoming_shutdown(TcpIncoming::from(listener).with_nodelay(Some(true)), signal);
    tokio::pin!(serve);
    let deadline = async {
        if shutdown_began.await.is_ok() {
            tokio::time::sleep(settings.drain_timeout).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let outcome = tokio::select! {
        outcome = &mut serve => outcome.map_err(Into::into),
        () = deadline => {
            tracing::warn!(timeout = ?settings.drain_timeout, "drain deadline passed; abandoning in-flight calls");
            Ok(())
        }
    };
    stop_pruner.cancel();
    let _ = pruner_task.await;
    if let Some(reaper_task) = reaper_task {
        let _ = reaper_task.await;
    }
    // Shutdown told the health tasks to stop; if serving ended otherwise, the finished server
    // dropped the signal future and the sender in it, which stops them too.
    let _ = health_task.await;
    if let Some(cache_task) = cache_task {
        let _ = cache_task.await;
    }
    outcome
}
