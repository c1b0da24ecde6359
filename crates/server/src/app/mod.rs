//! The composition root: the one place that turns a [`ServeConfig`] into a running server.
//!
//! `checkpointd serve`, the demo, the benchmark and the black-box tests all start the server
//! here, so they all exercise the same startup path: the store and its wrappers in one order,
//! the gRPC services, health, the admin port, the background jobs and one [`Shutdown`].

mod admin;
mod background;
mod depth_poll;

use crate::transport::TlsReloader;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic_health::server::HealthReporter;

use crate::cache::CachedStore;
use crate::config::{ConsoleSettings, ServeConfig, ServerSettings};
use crate::console::oidc::OidcSignIn;
use crate::console::{self, Console};
use crate::database;
use crate::grpc;
use crate::grpc::auth::{AuthLayer, Authenticator};
use crate::notify::{NotificationKey, Notifications};
use crate::outbound::{self, OutboundHttp};
use crate::serve_error::ServeError;
use crate::service::{Engine, RetentionService, Services, TaskService};
use crate::shutdown::Shutdown;
use crate::transport;
use checkpointd_core::secret::ExposeSecret;
use checkpointd_core::secret::redact_url;
use checkpointd_storage::keys::ApiKeyStore;
use checkpointd_storage::queue::TaskQueue;
use checkpointd_storage::store::{CheckpointStore, RetentionStore};

/// How long the startup health check may wait for the store before reporting NOT_SERVING.
const STARTUP_PING_TIMEOUT: Duration = Duration::from_secs(2);

/// A server that is built (store open, listeners bound) but not yet serving.
pub struct App {
    listener: TcpListener,
    admin_listener: TcpListener,
    /// The web console's listener and settings, when `--console-listen` is set, with its
    /// OpenID Connect provider, discovered, when one is configured.
    console: Option<(TcpListener, ConsoleSettings, Option<OidcSignIn>)>,
    settings: ServerSettings,
    engine: Engine,
    retention: Arc<dyn RetentionStore>,
    queue: Arc<dyn TaskQueue>,
    cache: Option<Arc<CachedStore>>,
    auth: Option<Arc<Authenticator>>,
    keys: Arc<dyn ApiKeyStore>,
    notifications: Notifications,
    notification_key: Option<Arc<NotificationKey>>,
    /// The client of the server's own calls (JWKS, OpenID, webhooks), trusting
    /// `--outbound-ca-file`.
    outbound: OutboundHttp,
    tls: Option<Arc<TlsReloader>>,
    metrics: prometheus::Registry,
    shutdown: Shutdown,
}

impl App {
    /// Opens the store, composes its wrappers and binds both listeners; nothing is served
    /// before [`App::run`].
    pub async fn build(mut config: ServeConfig) -> Result<Self, ServeError> {
        config.server.auth.check_listener(config.listen)?;
        // Before anything is opened: settings that cannot fit the memory are refused at once.
        let bound = grpc::memory_fit::memory_bound(&config.server.limits);
        config.server.limits =
            grpc::memory_fit::fit(&config.server, bound).map_err(ServeError::Setting)?;
        let notification_key = match &config.server.webhook_key_file {
            None => None,
            Some(path) => Some(Arc::new(
                NotificationKey::load(path).map_err(ServeError::Setting)?,
            )),
        };
        // Before the database, so a bad certificate fails startup at once.
        let tls = match config.tls {
            None => None,
            Some(settings) => Some(TlsReloader::load(settings)?),
        };
        let url = config.database.expose_secret();
        let opened = database::open(url, &config.store)
            .await
            .map_err(|source| ServeError::Database {
                url: redact_url(url),
                source,
            })?
            // The wrappers, innermost first. Every store call is timed and traced; the cache
            // sits outside, so a hit costs no store time and only misses show up as store
            // latency. Retention goes around the cache: it is never cached.
            .instrumented();
        let store = opened.store;
        let outbound = outbound::client(config.server.outbound_ca_file.as_deref())
            .map_err(ServeError::Setting)?;
        let auth = Authenticator::new(&config.server.auth, opened.keys.clone(), &outbound).await?;
        if auth.is_none() {
            tracing::warn!("authentication is off: the tenant is whatever x-tenant-id names");
        }
        let (store, cache) = match config.cache {
            None => (store, None),
            Some(settings) => {
                tracing::info!(
                    redis = %redact_url(settings.url.expose_secret()),
                    prefix = %settings.prefix,
                    "redis cache enabled"
                );
                let cached = CachedStore::wrap(store, settings).map_err(ServeError::Cache)?;
                (cached.clone() as Arc<dyn CheckpointStore>, Some(cached))
            }
        };
        let admin_listener = bind(
            config.admin_listen,
            "--admin-listen / CHECKPOINTD_ADMIN_LISTEN",
        )
        .await?;
        let listener = bind(config.listen, "--listen / CHECKPOINTD_LISTEN").await?;
        let console = match config.console {
            None => None,
            Some(console) => {
                if auth.is_none() {
                    return Err(ServeError::from(
                        "the web console needs authentication to sign people in: set --auth \
                         api-key (CHECKPOINTD_AUTH) or leave --console-listen unset"
                            .to_owned(),
                    ));
                }
                let bound = bind(
                    console.listen,
                    "--console-listen / CHECKPOINTD_CONSOLE_LISTEN",
                )
                .await?;
                let oidc = match console.oidc.clone() {
                    None => None,
                    Some(oidc) => Some(
                        OidcSignIn::discover(oidc, outbound.clone())
                            .await
                            .map_err(ServeError::Setting)?,
                    ),
                };
                Some((bound, console, oidc))
            }
        };
        Ok(Self {
            listener,
            admin_listener,
            console,
            settings: config.server,
            engine: Engine::new(store),
            retention: opened.retention,
            queue: opened.queue,
            cache,
            auth,
            keys: opened.keys,
            notifications: Notifications::new(opened.notifications, notification_key.clone()),
            notification_key,
            outbound,
            tls,
            metrics: prometheus::Registry::new(),
            shutdown: Shutdown::new(),
        })
    }

    /// Serves `registry` on the admin port's `/metrics` (by default an empty registry).
    pub fn with_metrics_registry(mut self, registry: prometheus::Registry) -> Self {
        self.metrics = registry;
        self
    }

    /// The bound gRPC address (the real port when configured with port 0).
    pub fn addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The bound admin address, serving `/metrics` and `/healthz`.
    pub fn admin_addr(&self) -> std::io::Result<SocketAddr> {
        self.admin_listener.local_addr()
    }

    /// The bound web console address, when the console is on.
    pub fn console_addr(&self) -> Option<std::io::Result<SocketAddr>> {
        self.console
            .as_ref()
            .map(|(listener, _, _)| listener.local_addr())
    }

    /// The engine the services use, over the fully wrapped store.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The retention contract of the same database, around any cache.
    pub fn retention(&self) -> &Arc<dyn RetentionStore> {
        &self.retention
    }

    /// The API keys of the same database, as `checkpointd keys` manages them.
    pub fn keys(&self) -> &Arc<dyn ApiKeyStore> {
        &self.keys
    }

    /// Webhook endpoints, deliveries and the outbox of the same database.
    pub fn notifications(&self) -> &Notifications {
        &self.notifications
    }

    /// The TLS certificate in use and its reload, when the gRPC port speaks TLS.
    pub fn tls(&self) -> Option<&Arc<TlsReloader>> {
        self.tls.as_ref()
    }

    /// The Redis cache, when one is configured.
    pub fn cache(&self) -> Option<&Arc<CachedStore>> {
        self.cache.as_ref()
    }

    /// The server's shutdown: beginning it has the same effect as `signal` in [`App::run`].
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// Serves until `signal` resolves or the shutdown begins otherwise. Health turns
    /// NOT_SERVING at once, in-flight calls get up to `drain_timeout` to finish, and `run`
    /// returns only after every background task has stopped.
    pub async fn run(
        self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let Self {
            listener,
            admin_listener,
            console: console_listener,
            settings,
            engine,
            retention,
            queue,
            cache,
            auth,
            keys,
            notifications,
            notification_key,
            outbound,
            tls,
            metrics,
            shutdown,
        } = self;
        let health = HealthReporter::new();
        // The first status is known before the first request can ask for it.
        let healthy = grpc::health::check_store(&engine, &health, STARTUP_PING_TIMEOUT).await;
        if !healthy {
            tracing::warn!("store unreachable at startup; health is NOT_SERVING");
        }
        if let Some(cache) = &cache {
            // Likewise the cache's: a probe right after start sees a status, never NOT_FOUND.
            let up = *cache.status().borrow();
            grpc::health::publish_cache(&health, up).await;
        }
        let tasks = TaskService::new(
            queue.clone(),
            settings.retry_defaults,
            settings.stale_threshold,
        )
        .with_approval_pins(retention.clone())
        .with_auto_resume_hitl(settings.auto_resume_hitl);
        let services = Services {
            engine: engine.clone(),
            retention: RetentionService::new(retention.clone()),
            tasks: Some(tasks),
            notifications: Some(notifications.clone()),
        };
        // The console's URL as browsers reach it, when `--console-public-url` says.
        let console_url = console_listener
            .as_ref()
            .and_then(|(_, console, _)| console.public_url.clone());
        if let (Some((listener, console, oidc)), Some(auth)) = (console_listener, &auth) {
            let pages = Console::new(
                services.clone(),
                &settings,
                auth.clone(),
                keys.clone(),
                console.session_ttl,
                tls.is_some(),
                oidc,
            );
            console::serve(&shutdown, listener, pages, tls.clone());
        }
        let router = grpc::router(services, &settings, health.clone(), AuthLayer::new(auth))?;
        shutdown.spawn(begin_on(signal, shutdown.clone()));
        background::watch_health(
            &shutdown,
            &health,
            engine.clone(),
            settings.health_interval,
            healthy,
            cache.map(|cache| cache.status()),
        );
        background::serve_admin(&shutdown, admin_listener, metrics, engine.clone());
        background::run_maintenance(
            &shutdown,
            engine,
            retention,
            queue,
            notifications.store().clone(),
            &settings,
        );
        background::run_notifications(
            &shutdown,
            &notifications,
            notification_key,
            outbound,
            console_url.as_deref(),
        );
        if let Some(tls) = &tls {
            transport::tls::watch(&shutdown, tls.clone());
        }
        let incoming = transport::served::ServedIncoming::new(
            transport::incoming::GuardedIncoming::new(listener, settings.connections),
            tls,
            settings.connections.header_read_timeout,
        );
        let serve =
            router.serve_with_incoming_shutdown(incoming, shutdown.token().cancelled_owned());
        let outcome = tokio::select! {
            outcome = serve => outcome.map_err(Into::into),
            () = drain_deadline(&shutdown, settings.drain_timeout) => {
                tracing::warn!(
                    timeout = ?settings.drain_timeout,
                    "drain deadline passed; abandoning in-flight calls"
                );
                Ok(())
            }
        };
        // Serving can also end on its own (a transport error); the background tasks stop then too.
        shutdown.begin();
        shutdown.finished().await;
        outcome
    }
}

/// Binds one listener; a failure names the address and the setting it came from, since with
/// two listeners "address already in use" alone does not say which one to change.
async fn bind(addr: SocketAddr, setting: &'static str) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Listen {
            addr,
            setting,
            source,
        })
}

/// Begins the shutdown when `signal` resolves; ends early if it begins some other way.
async fn begin_on(signal: impl Future<Output = ()>, shutdown: Shutdown) {
    tokio::select! {
        () = signal => shutdown.begin(),
        () = shutdown.begun() => {}
    }
}

/// Resolves `drain_timeout` after the shutdown begins.
async fn drain_deadline(shutdown: &Shutdown, drain_timeout: Duration) {
    shutdown.begun().await;
    tracing::info!("shutdown requested; draining in-flight calls");
    tokio::time::sleep(drain_timeout).await;
}
