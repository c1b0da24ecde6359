//! The connection to Redis: used while it works, dropped at the first failure, and re-made in
//! the background, so an outage costs requests nothing but a counter.

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::{Notify, watch};

use super::stats::CacheStats;

/// Outage warnings are logged at most this often; the counter records every bypass.
const WARNING_INTERVAL: Duration = Duration::from_secs(30);
/// Bounds of the reconnect backoff.
const RECONNECT_MIN: Duration = Duration::from_millis(100);
const RECONNECT_MAX: Duration = Duration::from_secs(5);

/// A shared, self-healing Redis connection.
pub struct RedisLink {
    client: redis::Client,
    timeout: Duration,
    connection: RwLock<Option<ConnectionManager>>,
    lost: Arc<Notify>,
    up: watch::Sender<bool>,
    last_warning: Mutex<Option<Instant>>,
    pub stats: Arc<CacheStats>,
}

impl RedisLink {
    /// Starts connecting in the background and returns at once: a Redis that is down at
    /// startup is an outage like any other, not a reason to refuse to serve. `rediss://` URLs
    /// verify the server against `ca_cert` when given, else against the system's roots; a
    /// password or ACL user comes from the URL.
    pub fn start(
        url: &str,
        ca_cert: Option<&Path>,
        timeout: Duration,
    ) -> Result<Arc<Self>, String> {
        let invalid = |error: redis::RedisError| format!("invalid redis url: {error}");
        let client = match ca_cert {
            None => redis::Client::open(url).map_err(invalid)?,
            Some(path) => {
                let root_cert = std::fs::read(path).map_err(|error| {
                    format!("cannot read --redis-ca-cert {}: {error}", path.display())
                })?;
                if !url.starts_with("rediss://") {
                    return Err("--redis-ca-cert needs a rediss:// URL".to_owned());
                }
                redis::Client::build_with_tls(
                    url,
                    redis::TlsCertificates {
                        client_tls: None,
                        root_cert: Some(root_cert),
                    },
                )
                .map_err(invalid)?
            }
        };
        let link = Arc::new(Self {
            client,
            timeout,
            connection: RwLock::new(None),
            lost: Arc::default(),
            up: watch::channel(false).0,
            last_warning: Mutex::new(None),
            stats: Arc::default(),
        });
        tokio::spawn(reconnect_loop(Arc::downgrade(&link)));
        Ok(link)
    }

    /// The connection, or `None` while Redis is unreachable.
    pub fn connection(&self) -> Option<ConnectionManager> {
        self.connection
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// How long one Redis call may take before it counts as a failure.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether Redis is reachable now; changes are published for health reporting.
    pub fn status(&self) -> watch::Receiver<bool> {
        self.up.subscribe()
    }

    /// Drops the connection after a failed call and wakes the reconnect loop.
    pub fn failed(&self, what: &str, error: &dyn std::fmt::Display) {
        let was_up = self
            .connection
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
            .is_some();
        if was_up {
            self.up.send_replace(false);
            self.lost.notify_one();
        }
        self.warn(what, error);
    }

    fn warn(&self, what: &str, error: &dyn std::fmt::Display) {
        let mut last = self
            .last_warning
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if last.is_none_or(|at| at.elapsed() >= WARNING_INTERVAL) {
            *last = Some(Instant::now());
            tracing::warn!(%error, during = what, "redis cache unreachable; serving from the store");
        }
    }

    async fn connect(&self) -> redis::RedisResult<ConnectionManager> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(0);
        let mut connection = self
            .client
            .get_connection_manager_with_config(config)
            .await?;
        redis::cmd("PING")
            .query_async::<()>(&mut connection)
            .await?;
        Ok(connection)
    }
}

/// Keeps a connection in place: connects, then sleeps until a call reports it lost. Ends when
/// the link is dropped.
async fn reconnect_loop(link: Weak<RedisLink>) {
    let mut delay = RECONNECT_MIN;
    loop {
        let Some(strong) = link.upgrade() else { return };
        if strong.connection().is_some() {
            let lost = strong.lost.clone();
            drop(strong);
            // A loss signalled meanwhile leaves a permit, so none is missed; the timeout makes
            // the task notice a dropped link.
            let _ = tokio::time::timeout(RECONNECT_MAX, lost.notified()).await;
            continue;
        }
        match strong.connect().await {
            Ok(connection) => {
                *strong
                    .connection
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(connection);
                strong.up.send_replace(true);
                tracing::info!("redis cache reachable");
                delay = RECONNECT_MIN;
            }
            Err(error) => {
                strong.warn("connect", &error);
                drop(strong);
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(RECONNECT_MAX);
            }
        }
    }
}
