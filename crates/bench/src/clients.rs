//! The contenders' clients (a real tonic client of an in-process server, a raw tokio-postgres
//! connection, raw rusqlite connections to a file) and the batch runner that drives many of them
//! at once.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio_postgres::{NoTls, Statement};
use tokio_util::sync::DropGuard;
use tonic::Request;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::Channel;

use super::BoxError;
use checkpointd::app::App;
use checkpointd::cache::CacheStats;
use checkpointd::config::CacheSettings;
use checkpointd::config::ServeConfig;
use checkpointd::config::ServerSettings;
use checkpointd::serve_error::ServeError;
use checkpointd::shutdown::Shutdown;
use checkpointd_core::secret::redact_url;
use checkpointd_protocol::v1::checkpoint_service_client::CheckpointServiceClient;
use checkpointd_protocol::v1::{GetRunRequest, LoadLatestRequest, SaveRequest};
use checkpointd_storage::keys::ApiKeyStore;
use checkpointd_storage::store::StoreOptions;

/// What a batch does: write a new step, or read back the last one written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Write,
    Read,
}

/// One simulated agent: its own run, its own connection, its own step counter.
///
/// Each call returns the latency of the operation alone; building the request and checking
/// the answer happen outside the timed part.
#[async_trait]
pub trait BenchClient: Send + 'static {
    /// Writes the next step of the client's run.
    async fn write_next(&mut self) -> Result<Duration, BoxError>;
    /// Reads the step written last.
    async fn read_last(&mut self) -> Result<Duration, BoxError>;
}

/// A checkpointd server on `127.0.0.1:0` in this process, over a store URL.
pub struct InProcessServer {
    pub addr: SocketAddr,
    /// The API keys of the server's database, as `checkpointd keys` manages them.
    pub keys: Arc<dyn ApiKeyStore>,
    /// What the Redis cache did, when the server has one.
    pub cache_stats: Option<Arc<CacheStats>>,
    shutdown: Shutdown,
    task: tokio::task::JoinHandle<Result<(), ServeError>>,
    /// A server dropped without [`InProcessServer::stop`] (an error cut the scenario short)
    /// still shuts down.
    _stop_on_drop: DropGuard,
}

impl InProcessServer {
    pub async fn start(url: &str, options: &StoreOptions) -> Result<Self, BoxError> {
        Self::start_with(url, options, ServerSettings::default()).await
    }

    /// Serves checkpoints and the task queue of the store `url` names.
    pub async fn start_with(
        url: &str,
        options: &StoreOptions,
        settings: ServerSettings,
    ) -> Result<Self, BoxError> {
        Self::serve(ServeConfig {
            database: url.into(),
            store: options.clone(),
            server: settings,
            ..ServeConfig::default()
        })
        .await
    }

    /// Serves the store `url` names with a Redis cache in front.
    pub async fn start_cached(
        url: &str,
        options: &StoreOptions,
        cache: CacheSettings,
    ) -> Result<Self, BoxError> {
        Self::serve(ServeConfig {
            database: url.into(),
            store: options.clone(),
            cache: Some(cache),
            ..ServeConfig::default()
        })
        .await
    }

    async fn serve(config: ServeConfig) -> Result<Self, BoxError> {
        let app = App::build(config).await?;
        let addr = app.addr()?;
        let keys = app.keys().clone();
        let cache_stats = app.cache().map(|cache| cache.stats());
        let shutdown = app.shutdown();
        let task = tokio::spawn(app.run(std::future::pending()));
        Ok(Self {
            addr,
            keys,
            cache_stats,
            _stop_on_drop: shutdown.begin_on_drop(),
            shutdown,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn stop(self) -> Result<(), BoxError> {
        self.shutdown.begin();
        Ok(self.task.await??)
    }
}

/// A checkpoint client over its own HTTP/2 connection.
pub async fn checkpoint_client(
    addr: SocketAddr,
) -> Result<CheckpointServiceClient<Channel>, BoxError> {
    let channel = Channel::from_shared(format!("http://{addr}"))?
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await?;
    Ok(CheckpointServiceClient::new(channel))
}

/// A tonic client over its own HTTP/2 connection, as a separate agent process would have.
pub struct GrpcClient {
    client: CheckpointServiceClient<Channel>,
    run_id: String,
    next_step: i64,
    state: Arc<Vec<u8>>,
    /// `Bearer <token>`, sent with every call, for a server with authentication.
    authorization: Option<MetadataValue<Ascii>>,
}

impl GrpcClient {
    pub async fn connect(
        addr: SocketAddr,
        run_id: String,
        state: Arc<Vec<u8>>,
    ) -> Result<Self, BoxError> {
        Ok(Self {
            client: checkpoint_client(addr).await?,
            run_id,
            next_step: 0,
            state,
            authorization: None,
        })
    }

    /// The same client, sending `authorization: Bearer <token>` with every call.
    pub fn with_token(mut self, token: &str) -> Result<Self, BoxError> {
        self.authorization = Some(format!("Bearer {token}").parse()?);
        Ok(self)
    }

    /// `message` with the client's credential, when it has one.
    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        if let Some(authorization) = &self.authorization {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
        }
        request
    }

    /// GetRun of the client's run, checked to name the step written last.
    pub async fn get_run(&mut self) -> Result<Duration, BoxError> {
        let request = self.request(GetRunRequest {
            run_id: self.run_id.clone(),
        });
        let start = Instant::now();
        let response = self.client.get_run(request).await?.into_inner();
        let elapsed = start.elapsed();
        let latest = response.run.and_then(|run| run.latest_step);
        if latest != Some(self.next_step - 1) {
            return Err(format!("GetRun of {} named latest step {latest:?}", self.run_id).into());
        }
        Ok(elapsed)
    }
}

#[async_trait]
impl BenchClient for GrpcClient {
    async fn write_next(&mut self) -> Result<Duration, BoxError> {
        let request = self.request(SaveRequest {
            run_id: self.run_id.clone(),
            step: self.next_step,
            content_type: "application/json".to_owned(),
            state: self.state.to_vec(),
            ..SaveRequest::default()
        });
        let start = Instant::now();
        let response = self.client.save(request).await?;
        let elapsed = start.elapsed();
        if response.get_ref().already_existed {
            return Err(format!(
                "save of {} step {} was not new",
                self.run_id, self.next_step
            )
            .into());
        }
        self.next_step += 1;
        Ok(elapsed)
    }

    async fn read_last(&mut self) -> Result<Duration, BoxError> {
        let request = self.request(LoadLatestRequest {
            run_id: self.run_id.clone(),
            ..Default::default()
        });
        let start = Instant::now();
        let response = self.client.load_latest(request).await?.into_inner();
        let elapsed = start.elapsed();
        let checkpoint = response
            .checkpoint
            .ok_or("LoadLatest returned no checkpoint")?;
        if checkpoint.step != self.next_step - 1 || checkpoint.state.len() != self.state.len() {
            return Err(format!(
                "LoadLatest of {} returned step {} with {} bytes",
                self.run_id,
                checkpoint.step,
                checkpoint.state.len()
            )
            .into());
        }
        Ok(elapsed)
    }
}

/// One tokio-postgres connection with prepared single-row INSERT and primary-key SELECT.
pub struct RawClient {
    pg: tokio_postgres::Client,
    insert: Statement,
    select: Statement,
    run_id: String,
    next_step: i64,
    state: Arc<Vec<u8>>,
}

/// Opens a connection and drives it on its own task.
pub async fn pg_connect(url: &str) -> Result<tokio_postgres::Client, BoxError> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|error| format!("cannot connect to {}: {error}", redact_url(url)))?;
    tokio::spawn(connection);
    Ok(client)
}

impl RawClient {
    /// `table` must have columns `(run text, step bigint, payload bytea)`.
    pub async fn connect(
        url: &str,
        table: &str,
        run_id: String,
        state: Arc<Vec<u8>>,
    ) -> Result<Self, BoxError> {
        let pg = pg_connect(url).await?;
        let insert = pg
            .prepare(&format!(
                "INSERT INTO {table} (run, step, payload) VALUES ($1, $2, $3)"
            ))
            .await?;
        let select = pg
            .prepare(&format!(
                "SELECT payload FROM {table} WHERE run = $1 AND step = $2"
            ))
            .await?;
        Ok(Self {
            pg,
            insert,
            select,
            run_id,
            next_step: 0,
            state,
        })
    }
}

#[async_trait]
impl BenchClient for RawClient {
    async fn write_next(&mut self) -> Result<Duration, BoxError> {
        let payload: &[u8] = &self.state;
        let start = Instant::now();
        self.pg
            .execute(&self.insert, &[&self.run_id, &self.next_step, &payload])
            .await?;
        let elapsed = start.elapsed();
        self.next_step += 1;
        Ok(elapsed)
    }

    async fn read_last(&mut self) -> Result<Duration, BoxError> {
        let step = self.next_step - 1;
        let start = Instant::now();
        let row = self
            .pg
            .query_one(&self.select, &[&self.run_id, &step])
            .await?;
        // Owned bytes, as an application restoring state would hold them.
        let payload: Vec<u8> = row.get(0);
        let elapsed = start.elapsed();
        if payload.len() != self.state.len() {
            return Err(format!("SELECT returned {} bytes", payload.len()).into());
        }
        Ok(elapsed)
    }
}

/// How long a raw SQLite statement waits for a lock, as checkpointd's SQLite store does.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The PRAGMAs checkpointd's SQLite store sets on every connection it opens
/// (`crates/sqlite/src/store/schema.rs`): the same durability, so the floor is honest.
fn sqlite_configure(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(SQLITE_BUSY_TIMEOUT)?;
    // FULL syncs the WAL on every commit, as the store's Saves do.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// The read-write connection, in WAL mode, as the store's writer opens it.
fn sqlite_writer(path: &Path) -> Result<rusqlite::Connection, BoxError> {
    let conn = rusqlite::Connection::open(path)?;
    sqlite_configure(&conn)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!(
            "{} refused WAL mode (journal_mode is {mode})",
            path.display()
        )
        .into());
    }
    Ok(conn)
}

/// A read-only connection, as the store's loads use beside its writer.
fn sqlite_reader(path: &Path) -> Result<rusqlite::Connection, BoxError> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    sqlite_configure(&conn)?;
    Ok(conn)
}

/// Creates the SQLite file at `path` in WAL mode with `raw_bench (run, step, payload)`, the
/// same shape as the Postgres table the raw statements use.
pub async fn create_raw_sqlite(path: PathBuf) -> Result<(), BoxError> {
    tokio::task::spawn_blocking(move || -> Result<(), BoxError> {
        sqlite_writer(&path)?.execute_batch(
            "CREATE TABLE raw_bench (run TEXT NOT NULL, step INTEGER NOT NULL, payload BLOB NOT NULL, \
             PRIMARY KEY (run, step))",
        )?;
        Ok(())
    })
    .await?
}

/// A writer and a read-only connection to one SQLite file, driven the way checkpointd's SQLite
/// store drives its own: each statement on tokio's blocking pool (`spawn_blocking`) with the
/// connection behind a mutex, because rusqlite blocks the thread for the whole statement (the
/// fsync of a commit included) and must not stall the runtime's workers. The time measured is
/// the `spawn_blocking` round trip, so it includes the hand-off to the pool that the store's
/// Save and LoadLatest also pay.
pub struct RawSqliteClient {
    writer: Arc<Mutex<rusqlite::Connection>>,
    reader: Arc<Mutex<rusqlite::Connection>>,
    run_id: Arc<str>,
    next_step: i64,
    state: Arc<Vec<u8>>,
}

impl RawSqliteClient {
    /// `path` must hold `raw_bench`, as [`create_raw_sqlite`] makes it.
    pub async fn open(
        path: PathBuf,
        run_id: String,
        state: Arc<Vec<u8>>,
    ) -> Result<Self, BoxError> {
        let (writer, reader) = tokio::task::spawn_blocking(move || -> Result<_, BoxError> {
            Ok((sqlite_writer(&path)?, sqlite_reader(&path)?))
        })
        .await??;
        Ok(Self {
            writer: Arc::new(Mutex::new(writer)),
            reader: Arc::new(Mutex::new(reader)),
            run_id: run_id.into(),
            next_step: 0,
            state,
        })
    }
}

#[async_trait]
impl BenchClient for RawSqliteClient {
    async fn write_next(&mut self) -> Result<Duration, BoxError> {
        let (writer, run_id, state) = (
            Arc::clone(&self.writer),
            Arc::clone(&self.run_id),
            Arc::clone(&self.state),
        );
        let step = self.next_step;
        let start = Instant::now();
        tokio::task::spawn_blocking(move || -> rusqlite::Result<usize> {
            let conn = writer.lock().unwrap_or_else(PoisonError::into_inner);
            // Autocommit: the statement is its own transaction, synced on commit.
            conn.prepare_cached("INSERT INTO raw_bench (run, step, payload) VALUES (?1, ?2, ?3)")?
                .execute(rusqlite::params![&*run_id, step, state.as_slice()])
        })
        .await??;
        let elapsed = start.elapsed();
        self.next_step += 1;
        Ok(elapsed)
    }

    async fn read_last(&mut self) -> Result<Duration, BoxError> {
        let (reader, run_id) = (Arc::clone(&self.reader), Arc::clone(&self.run_id));
        let step = self.next_step - 1;
        let start = Instant::now();
        let payload = tokio::task::spawn_blocking(move || -> rusqlite::Result<Vec<u8>> {
            let conn = reader.lock().unwrap_or_else(PoisonError::into_inner);
            // Owned bytes, as an application restoring state would hold them.
            conn.prepare_cached("SELECT payload FROM raw_bench WHERE run = ?1 AND step = ?2")?
                .query_row(rusqlite::params![&*run_id, step], |row| row.get(0))
        })
        .await??;
        let elapsed = start.elapsed();
        if payload.len() != self.state.len() {
            return Err(format!("SELECT returned {} bytes", payload.len()).into());
        }
        Ok(elapsed)
    }
}

/// Clients run concurrently, each doing `per_client` operations back to back.
pub struct Batch {
    pub clients: Vec<Box<dyn BenchClient>>,
    pub latencies: Vec<Duration>,
    /// From the start of the first operation to the end of the last.
    pub wall: Duration,
}

pub async fn run_batch(
    clients: Vec<Box<dyn BenchClient>>,
    op: Op,
    per_client: usize,
) -> Result<Batch, BoxError> {
    let start = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_client);
                for _ in 0..per_client {
                    let latency = match op {
                        Op::Write => client.write_next().await,
                        Op::Read => client.read_last().await,
                    };
                    match latency {
                        Ok(latency) => latencies.push(latency),
                        Err(error) => return (client, Err(error)),
                    }
                }
                (client, Ok(latencies))
            })
        })
        .collect();
    let mut batch = Batch {
        clients: Vec::with_capacity(tasks.len()),
        latencies: Vec::new(),
        wall: Duration::ZERO,
    };
    let mut failure = None;
    for task in tasks {
        let (client, outcome) = task.await?;
        batch.clients.push(client);
        match outcome {
            Ok(latencies) => batch.latencies.extend(latencies),
            Err(error) => failure = failure.or(Some(error)),
        }
    }
    batch.wall = start.elapsed();
    match failure {
        Some(error) => Err(error),
        None => Ok(batch),
    }
}
