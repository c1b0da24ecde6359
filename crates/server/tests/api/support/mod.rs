//! Test support: a real server on port 0 over a chosen backend, a real client, raw database access.

mod cache_entries;
mod process;
mod proxy;
pub mod requests;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use checkpointd::cache::{CacheSettings, CachedStore};

use checkpointd::engine::Engine;
use checkpointd::grpc::{self, ServerSettings};
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{CheckpointVerdict, ValidateRequest};
use checkpointd::store::{self, StoreOptions};
use tokio::net::TcpListener;
use tonic::transport::Channel;

pub use cache_entries::{cache_keys, cached_step};
pub use checkpointd_testkit::{
    PgSchema, RedisProcess, database_url, redis_connection, redis_url, unique_prefix, wait_until,
};
pub use process::{ServerProcess, WorkerProcess};
pub use proxy::TcpProxy;

/// The store a test server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    Postgres,
}

/// A checkpointd server running in this process on an ephemeral port.
pub struct TestApp {
    pub addr: SocketAddr,
    pub backend: Backend,
    pub sqlite_path: Option<PathBuf>,
    pub pg: Option<PgSchema>,
    /// The database URL the server runs on (a second `memory://` opens a different store).
    pub url: String,
    /// The server's own engine, for driving maintenance (the pruner) in-process.
    pub engine: Engine,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    _server: tokio::task::JoinHandle<()>,
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

/// Starts a server in-process on an existing database URL.
pub async fn serve_on(url: &str, settings: ServerSettings) -> TestApp {
    let opened = store::open_with_queue(url, &StoreOptions { pool_size: 4 })
        .await
        .unwrap_or_else(|error| panic!("cannot open store {url}: {error}"));
    serve_backends(url, grpc::Backends::from(opened), settings).await
}

/// Starts a server in-process on an existing database URL with a Redis cache in front.
pub async fn serve_cached(url: &str, cache: CacheSettings) -> (TestApp, Arc<CachedStore>) {
    let opened = store::open_with_queue(url, &StoreOptions { pool_size: 4 })
        .await
        .unwrap_or_else(|error| panic!("cannot open store {url}: {error}"));
    let mut backends = grpc::Backends::from(opened);
    let cached = CachedStore::wrap(backends.engine.store().clone(), cache).expect("wrap store");
    backends.cache_status = Some(cached.status());
    backends.engine = Engine::new(cached.clone());
    (
        serve_backends(url, backends, ServerSettings::default()).await,
        cached,
    )
}

async fn serve_backends(url: &str, backends: grpc::Backends, settings: ServerSettings) -> TestApp {
    let engine = backends.engine.clone();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind port 0");
    let addr = listener.local_addr().unwrap();
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        grpc::run(listener, backends, settings, async {
            let _ = stop.await;
        })
        .await
        .expect("server failed");
    });
    TestApp {
        addr,
        backend: Backend::Memory,
        sqlite_path: None,
        pg: None,
        url: url.to_owned(),
        engine,
        shutdown: Some(shutdown),
        _server: server,
        _dir: None,
    }
}

impl TestApp {
    /// Signals the server to shut down, as SIGTERM does for the binary; it then drains.
    pub fn begin_shutdown(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
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
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
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
