//! The gRPC services (checkpoints, tasks, health, reflection) as one router; the composition
//! root ([`crate::app`]) serves it and drives the health statuses.

mod answer_budget;
pub mod answers;
pub mod auth;
mod checkpoint_service;
pub mod connection;
pub(crate) mod convert;
pub mod health;
mod request_budget;
mod request_limits;
mod retention_api;
mod save_scan;
pub mod status;
mod task_convert;
mod task_service;
pub mod tenant;
pub mod tls_error;
pub mod tls_settings;
mod wire_status;

use std::sync::Arc;
use std::time::Duration;

use tonic::transport::Server;
use tonic::transport::server::Router;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};
use tower_layer::{Identity, Stack};

pub use answer_budget::AnswerShareLayer;
pub use answers::AnswerLimits;
pub use checkpoint_service::CheckpointApi;
pub use connection::ConnectionSettings;
pub use request_limits::RequestLimits;
pub use task_service::TaskApi;

use crate::maintenance::RetentionSettings;
use crate::proto::checkpoint_service_server::CheckpointServiceServer;
use crate::proto::task_service_server::TaskServiceServer;
use crate::service::{Engine, TaskService};
use crate::telemetry::rpc_layer::RpcLayer;
use auth::AuthLayer;
use checkpointd_storage::queue::{RetryPolicy, TaskQueue};
use checkpointd_storage::store::RetentionStore;
use connection::ActivityLayer;
use request_limits::RequestLimitsLayer;
use wire_status::WireStatusLayer;

/// What the server serves: checkpoints always, the task queue when one is configured.
#[derive(Clone)]
pub struct Backends {
    /// The checkpoint engine over the store, with the cache in front when there is one.
    pub engine: Engine,
    /// The same database's retention contract, reached around any cache: operator pins and
    /// policies, approval pins, the pruner and the scrub.
    pub retention: Arc<dyn RetentionStore>,
    pub queue: Option<Arc<dyn TaskQueue>>,
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
    /// Whether an approval decision makes a task claimable at once, for tasks enqueued
    /// without a say; `false` parks decided tasks until `ResumeTask`.
    pub auto_resume_hitl: bool,
    /// Timeouts, keepalive and caps of client connections.
    pub connections: ConnectionSettings,
    /// How callers authenticate; the default is none.
    pub auth: auth::AuthSettings,
    /// Caps on a Save's repeated fields and on the request bytes all calls hold at once.
    pub limits: RequestLimits,
    /// How many message bytes one load answers with.
    pub answers: AnswerLimits,
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
            auto_resume_hitl: true,
            connections: ConnectionSettings::default(),
            auth: auth::AuthSettings::default(),
            limits: RequestLimits::default(),
            answers: AnswerLimits::default(),
        }
    }
}

/// The fully qualified name health checks use for the checkpoint service.
pub const CHECKPOINT_SERVICE_NAME: &str = "checkpoint.v1.CheckpointService";

/// The health check name of the Redis cache: NOT_SERVING while Redis is unreachable, which
/// degrades the server (every read goes to the store) without taking it down.
pub const CACHE_SERVICE_NAME: &str = "checkpointd.cache";

/// The router [`router`] builds: its services behind the server's layers.
pub type ServerRouter = Router<
    Stack<
        AnswerShareLayer,
        Stack<
            RequestLimitsLayer,
            Stack<
                WireStatusLayer,
                Stack<AuthLayer, Stack<RpcLayer, Stack<ActivityLayer, Identity>>>,
            >,
        >,
    >,
>;

/// The server's services behind the RPC and auth layers: health (whose statuses `health`
/// sets), reflection, checkpoints, and tasks when a queue is configured.
pub fn router(
    backends: Backends,
    settings: &ServerSettings,
    health: HealthReporter,
    auth: AuthLayer,
) -> Result<ServerRouter, tonic_reflection::server::Error> {
    let Backends {
        engine,
        retention,
        queue,
    } = backends;
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
    let checkpoints = CheckpointServiceServer::new(
        CheckpointApi::new(engine, retention.clone(), settings.max_request_bytes)
            .with_answer_limits(settings.answers),
    )
    .max_decoding_message_size(decode_ceiling);
    let tasks = queue.map(|queue| {
        let tasks = TaskService::new(queue, settings.retry_defaults, settings.stale_threshold)
            .with_approval_pins(retention)
            .with_auto_resume_hitl(settings.auto_resume_hitl);
        TaskServiceServer::new(TaskApi::new(tasks)).max_decoding_message_size(decode_ceiling)
    });
    let connections = settings.connections;
    let nonzero = |duration: Duration| (!duration.is_zero()).then_some(duration);
    Ok(Server::builder()
        .max_concurrent_streams(connections.max_concurrent_streams)
        .http2_keepalive_interval(nonzero(connections.keepalive_interval))
        .http2_keepalive_timeout(Some(connections.keepalive_timeout))
        // Outermost, so a call counts as in flight for as long as any layer works on it.
        .layer(ActivityLayer)
        .layer(RpcLayer)
        // Inside the RPC layer, so refused calls are counted with the code they get.
        .layer(auth)
        // Innermost, so the RPC metrics record the code the client receives.
        .layer(WireStatusLayer)
        // Inside the RPC layer, so refusals show in the metrics; in front of every decoder, so
        // a request's bytes are budgeted before they are buffered.
        .layer(RequestLimitsLayer::new(
            settings.limits,
            settings.max_request_bytes,
        ))
        // Innermost, so an answer's share of the answer budget moves from the handler's
        // response into the body and is held until the last byte is sent.
        .layer(AnswerShareLayer)
        .add_service(HealthServer::new(HealthService::from_health_reporter(
            health,
        )))
        .add_service(reflection)
        .add_service(checkpoints)
        .add_optional_service(tasks))
}
