//! Test support: the real app on port 0 over a chosen backend, a real client, raw database access.

mod cache_entries;
mod cli;
mod health;
mod process;
mod proxy;
pub mod requests;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use checkpointd::app::App;
use checkpointd::cache::CachedStore;
use checkpointd::config::CacheSettings;
use checkpointd::config::ServeConfig;
use checkpointd::config::ServerSettings;
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{CheckpointVerdict, LoadLatestRequest, ValidateRequest};
use checkpointd::service::Engine;
use checkpointd::shutdown::Shutdown;
use checkpointd_storage::keys::ApiKeyStore;
use checkpointd_storage::store::{RetentionStore, StoreOptions};
use tonic::transport::Channel;

pub use cache_entries::{cache_keys, cached_step};
pub use checkpointd_testkit::{
    PgSchema, RedisProcess, database_url, redis_connection, redis_url, unique_prefix, wait_until,
};
pub use cli::{cli, stdout_of};
pub use health::{next_status, serve_draining, watch_health};
pub use process::{ServerProcess, WorkerProcess, serve_command};
pub use proxy::TcpProxy;

/// The store a test server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    Postgres,
}

/// The checkpointd app running in this process on ephemeral ports (gRPC and admin).
pub struct TestApp {
    pub addr: SocketAddr,
    /// The admin HTTP port (`/metrics`, `/healthz`).
    pub admin_addr: SocketAddr,
    /// The web console, when the config turned it on.
    pub console_addr: Option<SocketAddr>,
    /// What `/metrics` renders; a test may register its own collectors in it.
    pub metrics: prometheus::Registry,
    pub backend: Backend,
    pub sqlite_path: Option<PathBuf>,
    pub pg: Option<PgSchema>,
    /// The database URL the server runs on (a second `memory://` opens a different store).
    pub url: String,
    /// The server's own engine, for driving maintenance (the pruner) in-process.
    pub engine: Engine,
    /// The server's retention contract (around the cache), for pins and policies in-process.
    pub retention: Arc<dyn RetentionStore>,
    /// The app's one shutdown: beginning it is what SIGTERM does to the binary.
    pub shutdown: Shutdown,
    /// The server's API keys, as `checkpointd keys` manages them.
    pub keys: Arc<dyn ApiKeyStore>,
    server: Option<tokio::task::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, ServerSettings::default()).await
}

pub async fn spawn_app_with(backend: Backend, settings: ServerSettings) -> TestApp {
    let (dir, sqlite_path, pg, url) = match backend {
        Backend::Memory => (None, None, None, "memory://".to_owned()),
        Backend::Sqlite => {
            let dir = tempfile::tempdir().expect("create a temp dir");
            let path = dir.path().join("checkpointd.db");
            let url = format!("sqlite://{}", path.display());
            (Some(dir), Some(path), None, url)
        }
        Backend::Postgres => {
            let schema = PgSchema::create().await;
            let url = schema.url();
            (None, None, Some(schema), url)
        }
    };
    let mut app = serve_on(&url, settings).await;
    app.backend = backend;
    app.sqlite_path = sqlite_path;
    app.pg = pg;
    app._dir = dir;
    app
}

/// Starts the app in-process on an existing database URL.
pub async fn serve_on(url: &str, settings: ServerSettings) -> TestApp {
    let (app, _) = serve_config(ServeConfig {
        server: settings,
        ..test_config(url)
    })
    .await;
    app
}

/// Starts the app in-process on an existing database URL with a Redis cache in front.
pub async fn serve_cached(url: &str, cache: CacheSettings) -> (TestApp, Arc<CachedStore>) {
    let (app, cached) = serve_config(ServeConfig {
        cache: Some(cache),
        ..test_config(url)
    })
    .await;
    (app, cached.expect("the app has the configured cache"))
}

/// The app's defaults (ports 0, no cache) over `url`, with a pool small enough for many
/// tests at once.
fn test_config(url: &str) -> ServeConfig {
    ServeConfig {
        database: url.into(),
        store: StoreOptions {
            pool_size: 4,
            ..Default::default()
        },
        ..ServeConfig::default()
    }
}

/// Builds and runs the app as `checkpointd serve` does; returns it with its cache, if any.
pub async fn serve_config(config: ServeConfig) -> (TestApp, Option<Arc<CachedStore>>) {
    let url = checkpointd_core::secret::redact_url(
        checkpointd_core::secret::ExposeSecret::expose_secret(&config.database),
    );
    let metrics = prometheus::Registry::new();
    let app = App::build(config)
        .await
        .unwrap_or_else(|error| panic!("cannot start the app on {url}: {error}"))
        .with_metrics_registry(metrics.clone());
    let addr = app.addr().unwrap();
    let admin_addr = app.admin_addr().unwrap();
    let console_addr = app.console_addr().map(Result::unwrap);
    let engine = app.engine().clone();
    let retention = app.retention().clone();
    let shutdown = app.shutdown();
    let keys = app.keys().clone();
    let cache = app.cache().cloned();
    let server = tokio::spawn(async move {
        app.run(std::future::pending())
            .await
            .expect("server failed");
    });
    let test_app = TestApp {
        addr,
        admin_addr,
        console_addr,
        metrics,
        backend: Backend::Memory,
        sqlite_path: None,
        pg: None,
        url,
        engine,
        retention,
        shutdown,
        keys,
        server: Some(server),
        _dir: None,
    };
    (test_app, cache)
}

impl TestApp {
    /// Signals the server to shut down, as SIGTERM does for the binary; it then drains.
    pub fn begin_shutdown(&mut self) {
        self.shutdown.begin();
    }

    /// Shuts the app down and waits until `run` has returned.
    pub async fn stop(&mut self) {
        self.shutdown.begin();
        if let Some(server) = self.server.take() {
            server.await.expect("the server task panicked");
        }
    }

    pub async fn client(&self) -> CheckpointServiceClient<Channel> {
        connect(self.addr).await
    }

    pub async fn tasks(&self) -> TaskServiceClient<Channel> {
        TaskServiceClient::new(channel(self.addr).await)
    }

    /// Moves a task's lease expiry into the past, as if its worker had stopped heartbeating.
    pub async fn expire_lease(&self, task_id: &str) {
        let past = match self.backend {
            Backend::Sqlite => "1",
            _ => "now() - interval '1 hour'",
        };
        self.raw_sql(&format!(
            "UPDATE tasks SET lease_expires_at = {past} WHERE id = '{task_id}'"
        ))
        .await;
    }

    /// Makes a pending task due now, whatever its backoff said.
    pub async fn make_due(&self, task_id: &str) {
        let past = match self.backend {
            Backend::Sqlite => "1",
            _ => "now() - interval '1 hour'",
        };
        self.raw_sql(&format!(
            "UPDATE tasks SET next_attempt_at = {past} WHERE id = '{task_id}'"
        ))
        .await;
    }

    pub async fn channel(&self) -> Channel {
        channel(self.addr).await
    }

    /// Runs a statement directly on the backing database, bypassing checkpointd.
    pub async fn raw_sql(&self, sql: &str) {
        match self.backend {
            Backend::Memory => panic!("the memory backend has no SQL"),
            Backend::Sqlite => {
                let path = self.sqlite_path.clone().unwrap();
                let sql = sql.to_owned();
                tokio::task::spawn_blocking(move || {
                    let conn = rusqlite::Connection::open(path).unwrap();
                    conn.busy_timeout(Duration::from_secs(5)).unwrap();
                    conn.execute_batch(&sql).unwrap();
                })
                .await
                .unwrap();
            }
            Backend::Postgres => self.pg.as_ref().unwrap().execute(sql).await,
        }
    }

    /// Flips the first byte of a stored checkpoint's state.
    pub async fn corrupt_state(&self, run_id: &str, step: i64) {
        let flip = match self.backend {
            Backend::Sqlite => {
                "state = CAST(CASE WHEN length(state) = 0 THEN X'00' ELSE \
                 (CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(state, 2) END AS BLOB)"
            }
            _ => {
                "state = CASE WHEN length(state) = 0 THEN '\\x00'::bytea \
                 ELSE set_byte(state, 0, (get_byte(state, 0) + 1) % 256) END"
            }
        };
        self.raw_sql(&format!(
            "UPDATE checkpoints SET {flip} WHERE run_id = '{run_id}' AND step = {step}"
        ))
        .await;
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.begin();
    }
}

pub async fn channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap_or_else(|error| panic!("cannot connect to {addr}: {error}"))
}

pub async fn connect(addr: SocketAddr) -> CheckpointServiceClient<Channel> {
    CheckpointServiceClient::new(channel(addr).await).max_decoding_message_size(256 << 20)
}

/// The step LoadLatest restores for a run (which must have a checkpoint).
pub async fn latest_step(client: &mut CheckpointServiceClient<Channel>, run_id: &str) -> i64 {
    client
        .load_latest(LoadLatestRequest {
            run_id: run_id.to_owned(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap()
        .step
}

/// Validates every checkpoint of a run; the verdicts, ascending by step.
pub async fn validate_run(
    client: &mut CheckpointServiceClient<Channel>,
    run_id: &str,
) -> Vec<CheckpointVerdict> {
    client
        .validate(ValidateRequest {
            run_id: run_id.to_owned(),
            step: None,
        })
        .await
        .unwrap()
        .into_inner()
        .verdicts
}

/// Wraps a message in a request for a tenant.
pub fn for_tenant<T>(tenant: &str, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("x-tenant-id", tenant.parse().unwrap());
    request
}

/// Instantiates each listed `async fn(Backend)` test once per backend.
#[macro_export]
macro_rules! for_each_backend {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test] async fn $name() { super::$name($crate::support::Backend::Memory).await })*
        }
        mod sqlite {
            $(#[tokio::test] async fn $name() { super::$name($crate::support::Backend::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $name() { super::$name($crate::support::Backend::Postgres).await })*
        }
    };
}

/// Instantiates each listed test once per durable backend (SQLite and Postgres).
#[macro_export]
macro_rules! for_each_durable_backend {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test] async fn $name() { super::$name($crate::support::Backend::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $name() { super::$name($crate::support::Backend::Postgres).await })*
        }
    };
}
