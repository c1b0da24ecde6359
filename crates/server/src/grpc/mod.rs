//! The gRPC services (checkpoints, tasks, notifications, health, reflection) as one router; the composition
//! root ([`crate::app`]) serves it and drives the health statuses.

mod answer_budget;
pub mod answers;
pub mod auth;
mod checkpoint_service;
pub mod connection;
pub(crate) mod convert;
pub mod health;
pub mod memory_fit;
mod notification_service;
mod request_budget;
mod request_limits;
mod retention_api;
mod save_scan;
pub mod status;
mod task_convert;
mod task_service;
pub mod tenant;
mod watch;
mod wire_status;

use std::time::Duration;

use tonic::transport::Server;
use tonic::transport::server::Router;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};
use tower_layer::{Identity, Stack};

pub use answer_budget::AnswerShareLayer;
pub use checkpoint_service::CheckpointApi;
pub use notification_service::NotificationApi;
pub use task_convert::task_to_wire;
pub use task_service::TaskApi;

use crate::config::ServerSettings;
use crate::proto::checkpoint_service_server::CheckpointServiceServer;
use crate::proto::notification_service_server::NotificationServiceServer;
use crate::proto::task_service_server::TaskServiceServer;
use crate::service::Services;
use crate::telemetry::rpc_layer::RpcLayer;
use auth::AuthLayer;
use connection::ActivityLayer;
use request_limits::RequestLimitsLayer;
use wire_status::WireStatusLayer;

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
/// sets), reflection, checkpoints, and tasks when the services include them. The services
/// come built from the composition root; this only puts them on the wire.
pub fn router(
    services: Services,
    settings: &ServerSettings,
    health: HealthReporter,
    auth: AuthLayer,
) -> Result<ServerRouter, tonic_reflection::server::Error> {
    let Services {
        engine,
        retention,
        tasks,
        notifications,
    } = services;
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
    let engine_for_watch = engine.clone();
    let checkpoints = CheckpointServiceServer::new(
        CheckpointApi::new(engine, retention, settings.max_request_bytes)
            .with_answer_limits(settings.answers),
    )
    .max_decoding_message_size(decode_ceiling);
    let tasks = tasks.map(|tasks| {
        TaskServiceServer::new(TaskApi::new(tasks)).max_decoding_message_size(decode_ceiling)
    });
    let notifications = notifications.map(|notifications| {
        NotificationServiceServer::new(NotificationApi::new(notifications, engine_for_watch))
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
        // response into the body and is held until the last byte is sent (or the send
        // deadline cuts the answer off).
        .layer(AnswerShareLayer::new(settings.answers.send_timeout))
        .add_service(HealthServer::new(HealthService::from_health_reporter(
            health,
        )))
        .add_service(reflection)
        .add_service(checkpoints)
        .add_optional_service(tasks)
        .add_optional_service(notifications))
}
