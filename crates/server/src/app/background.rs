//! The tasks that run beside the gRPC server: health watchers, the admin port, the
//! maintenance jobs and the webhook sender. Each is spawned on the one [`Shutdown`] and ends once it begins.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic_health::server::HealthReporter;

use super::{admin, depth_poll};
use crate::config::ServerSettings;
use crate::grpc::health;
use crate::maintenance::{Pruner, Reaper};
use crate::notify::sender::Sender;
use crate::notify::{NotificationKey, Notifications};
use crate::outbound::OutboundHttp;
use crate::service::Engine;
use crate::shutdown::Shutdown;
use checkpointd_storage::notifications::NotificationStore;
use checkpointd_storage::queue::TaskQueue;
use checkpointd_storage::store::RetentionStore;

/// Keeps the health statuses current: the store's reachability every `interval` (starting
/// from `healthy`), and the cache's when one is configured. Both turn NOT_SERVING as soon as
/// shutdown begins, so load balancers move away while in-flight calls drain.
pub(super) fn watch_health(
    shutdown: &Shutdown,
    reporter: &HealthReporter,
    engine: Engine,
    interval: Duration,
    healthy: bool,
    cache_up: Option<tokio::sync::watch::Receiver<bool>>,
) {
    shutdown.spawn(health::watch_store(
        engine,
        reporter.clone(),
        interval,
        healthy,
        shutdown.token(),
    ));
    if let Some(cache_up) = cache_up {
        shutdown.spawn(health::watch_cache(
            reporter.clone(),
            cache_up,
            shutdown.token(),
        ));
    }
}

/// Serves `/metrics` from `registry` and `/healthz` from the engine's store on `listener`.
pub(super) fn serve_admin(
    shutdown: &Shutdown,
    listener: TcpListener,
    registry: prometheus::Registry,
    engine: Engine,
) {
    let stop = shutdown.token().cancelled_owned();
    shutdown.spawn(async move {
        if let Err(error) = admin::serve(listener, registry, engine, stop).await {
            tracing::warn!(%error, "admin port stopped");
        }
    });
}

/// The maintenance jobs, one loop each. A job interrupted by shutdown leaves nothing
/// half-done: every prune batch (the outbox's too) and every reap batch is its own
/// transaction, and a depth poll only reads.
pub(super) fn run_maintenance(
    shutdown: &Shutdown,
    engine: Engine,
    retention: Arc<dyn RetentionStore>,
    queue: Arc<dyn TaskQueue>,
    outbox: Arc<dyn NotificationStore>,
    settings: &ServerSettings,
) {
    shutdown.spawn(
        Pruner::new(engine, retention, settings.retention)
            .with_outbox(outbox, settings.webhook_retention)
            .run_periodically(shutdown.token()),
    );
    shutdown.spawn(
        Reaper::new(queue.clone(), settings.reap_interval).run_periodically(shutdown.token()),
    );
    shutdown.spawn(depth_poll::poll_queue(queue, shutdown.token()));
}

/// The webhook sender, when the server has a notification key, and the outbox-depth poll.
/// Both only read and settle the outbox; an RPC never waits on either.
pub(super) fn run_notifications(
    shutdown: &Shutdown,
    notifications: &Notifications,
    key: Option<Arc<NotificationKey>>,
    http: OutboundHttp,
    console_url: Option<&str>,
) {
    let store = notifications.store().clone();
    if let Some(key) = key {
        let sender = Sender::new(store.clone(), key, http).with_console(console_url);
        shutdown.spawn(sender.run(shutdown.token()));
    }
    shutdown.spawn(depth_poll::poll_outbox(store, shutdown.token()));
}
