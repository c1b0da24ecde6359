//! The server's settings tree: how it treats requests, tasks, retention, connections and
//! callers, built from the resolved [`Settings`] or, for an in-process server, from the
//! declared defaults.

use std::path::PathBuf;
use std::time::Duration;

use checkpointd_core::queue::RetryPolicy;

use super::answers::AnswerLimits;
use super::auth::AuthSettings;
use super::connections::ConnectionSettings;
use super::declare::declared_defaults;
use super::limits::RequestLimits;
use super::retention::RetentionSettings;
use super::settings::{Settings, SettingsArgs};

/// How often the store is pinged to drive the health status; not a flag.
const HEALTH_INTERVAL: Duration = Duration::from_secs(1);

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
    pub auth: AuthSettings,
    /// Caps on a Save's repeated fields and on the request bytes all calls hold at once.
    pub limits: RequestLimits,
    /// How many message bytes one load answers with.
    pub answers: AnswerLimits,
    /// The file webhook signing secrets are derived from; `None` turns webhooks off.
    pub webhook_key_file: Option<PathBuf>,
    /// How long the outbox keeps settled deliveries and events left without any; zero keeps
    /// everything.
    pub webhook_retention: Duration,
    /// Extra CA certificates trusted by the server's own https:// calls (JWKS, OpenID,
    /// webhooks).
    pub outbound_ca_file: Option<PathBuf>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self::from_settings(declared_defaults::<SettingsArgs>())
            .expect("the declared defaults are valid")
    }
}

impl ServerSettings {
    /// The server part of the resolved settings, each component checked.
    pub(super) fn from_settings(settings: Settings) -> Result<Self, String> {
        let max_request_bytes = settings.max_request_bytes;
        Ok(Self {
            max_request_bytes,
            drain_timeout: settings.drain_timeout,
            health_interval: HEALTH_INTERVAL,
            retry_defaults: settings.queue.retry_defaults()?,
            stale_threshold: settings.queue.queue_stale_threshold,
            retention: RetentionSettings::from(settings.retention),
            reap_interval: settings.queue.reap_interval,
            auto_resume_hitl: settings.queue.auto_resume_hitl,
            connections: ConnectionSettings::try_from(settings.connections)?,
            auth: AuthSettings::from_values(settings.auth)?,
            limits: RequestLimits::from_values(settings.limits, max_request_bytes)?,
            answers: AnswerLimits::from(settings.answers),
            webhook_key_file: settings.notifications.webhook_key_file,
            webhook_retention: settings.notifications.webhook_retention,
            outbound_ca_file: settings.outbound.outbound_ca_file,
        })
    }
}
