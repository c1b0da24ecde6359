//! Configuration, layered: built-in defaults < config file < `CHECKPOINTD_*` environment < flags.
//!
//! The command line that picks a command lives with the binary (`main.rs`): this module knows
//! only settings, so it depends on none of the commands' modules (runner, bench, cli).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde::Deserialize;

use crate::cache::CacheSettings;
pub use crate::grpc::tls_settings::TlsSettings;
use crate::grpc::{ConnectionSettings, ServerSettings};
use crate::maintenance::RetentionSettings;
use crate::serve_error::ServeError;
use checkpointd_core::retention::RetentionPolicy;
use checkpointd_core::secret::{ExposeSecret, SecretString, parse_secret};
use checkpointd_storage::queue::RetryPolicy;
use checkpointd_storage::store::StoreOptions;

mod auth;

pub use auth::AuthArgs;

mod answers;
mod limits;
pub use answers::AnswerArgs;
pub use limits::LimitArgs;

/// Flags of `checkpointd serve`; each also reads a `CHECKPOINTD_*` variable.
#[derive(Debug, Default, Args)]
pub struct ServeArgs {
    /// TOML file with any of the settings below (keys as the flags, with underscores).
    #[arg(long, env = "CHECKPOINTD_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:50051].
    #[arg(long, env = "CHECKPOINTD_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// memory://, sqlite://PATH or postgres://... (`sslmode` and `sslrootcert` honoured)
    /// [default: sqlite://~/.checkpointd/checkpointd.db].
    #[arg(long, env = "CHECKPOINTD_DATABASE", hide_env_values = true, value_parser = parse_secret)]
    pub database: Option<SecretString>,
    /// Largest request accepted, in bytes [default: 16777216].
    #[arg(long, env = "CHECKPOINTD_MAX_REQUEST_BYTES")]
    pub max_request_bytes: Option<usize>,
    /// How long in-flight calls may finish after SIGTERM, e.g. `10s` [default: 10s].
    #[arg(long, env = "CHECKPOINTD_DRAIN_TIMEOUT", value_parser = parse_duration)]
    pub drain_timeout: Option<Duration>,
    /// Postgres connection pool size [default: 16].
    #[arg(long, env = "CHECKPOINTD_POOL_SIZE")]
    pub pool_size: Option<usize>,
    /// Log format: `text` or `json` [default: text].
    #[arg(long, env = "CHECKPOINTD_LOG_FORMAT")]
    pub log_format: Option<LogFormat>,
    /// Total runs a task may have, the first included [default: 5].
    #[arg(long, env = "CHECKPOINTD_QUEUE_MAX_ATTEMPTS")]
    pub queue_max_attempts: Option<u32>,
    /// Delay before a task's first retry [default: 1s].
    #[arg(long, env = "CHECKPOINTD_QUEUE_INITIAL_DELAY", value_parser = parse_duration)]
    pub queue_initial_delay: Option<Duration>,
    /// Longest delay between retries [default: 5m].
    #[arg(long, env = "CHECKPOINTD_QUEUE_MAX_DELAY", value_parser = parse_duration)]
    pub queue_max_delay: Option<Duration>,
    /// Lease given to claims that ask for none: a running task not heartbeated for this long
    /// is stale and may be reclaimed [default: 30s].
    #[arg(long, env = "CHECKPOINTD_QUEUE_STALE_THRESHOLD", value_parser = parse_duration)]
    pub queue_stale_threshold: Option<Duration>,
    /// Time between reaper passes, which bury stale tasks on their final attempt as dead
    /// letters; `0s` turns the reaper off [default: 5s].
    #[arg(long, env = "CHECKPOINTD_REAP_INTERVAL", value_parser = parse_duration)]
    pub reap_interval: Option<Duration>,
    /// Whether an approved or rejected task is claimable at once (`true`) or stays parked in
    /// input_required until `checkpointd tasks resume ID` (`false`), for tasks enqueued without
    /// a say [default: true].
    #[arg(long, env = "CHECKPOINTD_AUTO_RESUME_HITL")]
    pub auto_resume_hitl: Option<bool>,
    /// Redis URL of the hot cache, e.g. `redis://127.0.0.1:6379`, `redis://user:pw@host` or
    /// `rediss://host:6380` (TLS); unset = no cache.
    #[arg(long, env = "CHECKPOINTD_REDIS", hide_env_values = true, value_parser = parse_secret)]
    pub redis: Option<SecretString>,
    /// PEM CA bundle that signed the `rediss://` server's certificate [default: system roots].
    #[arg(long, env = "CHECKPOINTD_REDIS_CA_CERT")]
    pub redis_ca_cert: Option<PathBuf>,
    /// Prefix of every cache key, so deployments can share one Redis [default: checkpointd].
    #[arg(long, env = "CHECKPOINTD_CACHE_PREFIX")]
    pub cache_prefix: Option<String>,
    /// How long a cache entry lives after its last write [default: 1h].
    #[arg(long, env = "CHECKPOINTD_CACHE_TTL", value_parser = parse_duration)]
    pub cache_ttl: Option<Duration>,
    /// Checkpoints larger than this (state plus messages, bytes) are not cached [default: 1048576].
    #[arg(long, env = "CHECKPOINTD_CACHE_MAX_BYTES")]
    pub cache_max_bytes: Option<usize>,
    /// Admin HTTP address serving `/metrics` and `/healthz` [default: 127.0.0.1:9464].
    #[arg(long, env = "CHECKPOINTD_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub telemetry: crate::telemetry::TelemetryArgs,
    #[command(flatten)]
    pub retention: RetentionArgs,
    #[command(flatten)]
    pub connections: ConnectionArgs,
    /// Boxed, so the `serve` command stays near the others in size.
    #[command(flatten)]
    pub auth: Box<AuthArgs>,
    #[command(flatten)]
    pub tls: TlsArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub answers: Box<AnswerArgs>,
}

/// TLS flags of `checkpointd serve`.
#[derive(Debug, Default, Args)]
pub struct TlsArgs {
    /// PEM certificate chain of the gRPC port; with --tls-key, the port speaks TLS only.
    /// Re-read when the file changes and on SIGHUP.
    #[arg(long, env = "CHECKPOINTD_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, env = "CHECKPOINTD_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// PEM CA bundle: clients must present a certificate it signed (mTLS).
    #[arg(long, env = "CHECKPOINTD_TLS_CLIENT_CA")]
    pub tls_client_ca: Option<PathBuf>,
    /// How often the TLS files are checked for changes; `0s`: reload on SIGHUP only [default: 2s].
    #[arg(long, env = "CHECKPOINTD_TLS_RELOAD_INTERVAL", value_parser = parse_duration)]
    pub tls_reload_interval: Option<Duration>,
}

impl TlsArgs {
    /// These flags over the file's keys; no certificate = plain text.
    fn resolve(&self, file: &FileConfig) -> Result<Option<TlsSettings>, String> {
        let cert = self.tls_cert.clone().or(file.tls_cert.clone());
        let key = self.tls_key.clone().or(file.tls_key.clone());
        let client_ca = self.tls_client_ca.clone().or(file.tls_client_ca.clone());
        let file_interval = file
            .tls_reload_interval
            .as_deref()
            .map(parse_duration)
            .transpose()?;
        match (cert, key) {
            (Some(cert), Some(key)) => Ok(Some(TlsSettings {
                client_ca,
                reload_interval: self
                    .tls_reload_interval
                    .or(file_interval)
                    .unwrap_or(crate::grpc::tls_settings::DEFAULT_RELOAD_INTERVAL),
                ..TlsSettings::new(cert, key)
            })),
            (None, None) if client_ca.is_none() => Ok(None),
            (None, None) => Err("tls_client_ca needs tls_cert and tls_key".into()),
            _ => Err("tls_cert and tls_key go together".into()),
        }
    }
}

/// Retention flags, shared by `serve` and `prune`.
#[derive(Debug, Default, Args)]
pub struct RetentionArgs {
    /// Retention policy of runs that set none: `all`, `latest_only`, `keep_last:N` or
    /// `max_age:DURATION` [default: all].
    #[arg(long, env = "CHECKPOINTD_RETENTION", value_parser = parse_policy)]
    pub retention: Option<RetentionPolicy>,
    /// Time between background prune passes; `0s` turns the pruner off [default: 1m].
    #[arg(long, env = "CHECKPOINTD_PRUNE_INTERVAL", value_parser = parse_duration)]
    pub prune_interval: Option<Duration>,
    /// Most runs read per page and checkpoints deleted per transaction [default: 500].
    #[arg(long, env = "CHECKPOINTD_PRUNE_BATCH_SIZE", value_parser = clap::value_parser!(u32).range(1..))]
    pub prune_batch_size: Option<u32>,
}

pub fn parse_policy(raw: &str) -> Result<RetentionPolicy, String> {
    raw.parse()
        .map_err(|error: checkpointd_core::error::Error| error.to_string())
}

impl RetentionArgs {
    /// Applies these flags over the file's values over the defaults.
    fn resolve(
        &self,
        policy: Option<&str>,
        interval: Option<&str>,
        batch: Option<u32>,
    ) -> Result<RetentionSettings, String> {
        let defaults = RetentionSettings::default();
        let file_policy = policy.map(parse_policy).transpose()?;
        let file_interval = interval.map(parse_duration).transpose()?;
        Ok(RetentionSettings {
            default_policy: self
                .retention
                .or(file_policy)
                .unwrap_or(defaults.default_policy),
            prune_interval: self
                .prune_interval
                .or(file_interval)
                .unwrap_or(defaults.prune_interval),
            batch_size: self
                .prune_batch_size
                .or(batch)
                .map_or(defaults.batch_size, |n| n as usize),
        })
    }

    /// These flags alone over the defaults (the commands that read no config file).
    pub fn settings(&self) -> Result<RetentionSettings, String> {
        self.resolve(None, None, None)
    }
}

pub use checkpointd_telemetry::LogFormat;

/// The config file's shape: every key optional, unknown keys rejected.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<SocketAddr>,
    database: Option<SecretString>,
    max_request_bytes: Option<usize>,
    drain_timeout: Option<String>,
    pool_size: Option<usize>,
    log_format: Option<LogFormat>,
    queue_max_attempts: Option<u32>,
    queue_initial_delay: Option<String>,
    queue_max_delay: Option<String>,
    queue_stale_threshold: Option<String>,
    reap_interval: Option<String>,
    auto_resume_hitl: Option<bool>,
    redis: Option<SecretString>,
    redis_ca_cert: Option<PathBuf>,
    cache_prefix: Option<String>,
    cache_ttl: Option<String>,
    cache_max_bytes: Option<usize>,
    retention: Option<String>,
    prune_interval: Option<String>,
    prune_batch_size: Option<u32>,
    admin_listen: Option<SocketAddr>,
    otlp_endpoint: Option<String>,
    instance_id: Option<String>,
    // Client connections (ConnectionArgs).
    header_read_timeout: Option<String>,
    idle_timeout: Option<String>,
    http2_keepalive_interval: Option<String>,
    http2_keepalive_timeout: Option<String>,
    max_concurrent_streams: Option<u32>,
    max_connections: Option<usize>,
    // Authentication (AuthArgs).
    auth: Option<String>,
    allow_unauthenticated: Option<bool>,
    jwt_secret_file: Option<PathBuf>,
    jwt_jwks_file: Option<PathBuf>,
    jwt_jwks_url: Option<String>,
    jwt_issuer: Option<String>,
    jwt_audience: Option<String>,
    jwt_tenant_claim: Option<String>,
    jwt_role_claim: Option<String>,
    jwt_jwks_refresh: Option<String>,
    // TLS (TlsArgs).
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_client_ca: Option<PathBuf>,
    tls_reload_interval: Option<String>,
    // Request memory (LimitArgs).
    max_messages_per_save: Option<u32>,
    max_metadata_entries: Option<u32>,
    max_inflight_request_bytes: Option<usize>,
    max_tenant_request_bytes: Option<usize>,
    max_connection_request_bytes: Option<usize>,
    request_body_timeout: Option<String>,
    // Answer sizes (AnswerArgs).
    max_answer_message_bytes: Option<u64>,
    max_unpaged_answer_bytes: Option<u64>,
    max_inflight_answer_bytes: Option<u64>,
}

/// Resolved settings of `checkpointd serve`.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    /// The database URL; it may hold a password, so it is shown only through `redact_url`.
    pub database: SecretString,
    /// TLS on the gRPC port; `None`: plain text.
    pub tls: Option<TlsSettings>,
    pub server: ServerSettings,
    pub store: StoreOptions,
    pub log_format: LogFormat,
    /// The Redis cache, when `--redis` is set.
    pub cache: Option<CacheSettings>,
    pub admin_listen: SocketAddr,
    pub telemetry: crate::telemetry::TelemetrySettings,
}

impl Default for ServeConfig {
    /// An in-process server: an in-memory store, ephemeral loopback ports for gRPC and the
    /// admin port, no cache and default settings. The command line's own defaults (fixed
    /// ports, a SQLite file) are applied by [`ServeConfig::resolve`].
    fn default() -> Self {
        let loopback_any_port = SocketAddr::from(([127, 0, 0, 1], 0));
        Self {
            listen: loopback_any_port,
            database: "memory://".into(),
            tls: None,
            server: ServerSettings::default(),
            store: StoreOptions::default(),
            log_format: LogFormat::default(),
            cache: None,
            admin_listen: loopback_any_port,
            telemetry: crate::telemetry::TelemetrySettings {
                log_format: LogFormat::default(),
                otlp_endpoint: None,
                instance_id: crate::telemetry::default_instance_id(),
                prometheus: true,
            },
        }
    }
}

pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    humantime::parse_duration(raw).map_err(|error| format!("invalid duration {raw:?}: {error}"))
}

impl ServeConfig {
    /// Applies the layers: flags and environment (already merged by clap) over the file over
    /// the defaults.
    pub fn resolve(args: ServeArgs) -> Result<Self, ServeError> {
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let defaults = ServerSettings::default();
        let file_duration = |raw: &Option<String>| raw.as_deref().map(parse_duration).transpose();
        let file_drain = file_duration(&file.drain_timeout)?;
        let connections = args.connections.resolve(&file)?;
        let auth = (*args.auth).resolve(auth::AuthFile {
            auth: file.auth.clone(),
            allow_unauthenticated: file.allow_unauthenticated,
            jwt_secret_file: file.jwt_secret_file.clone(),
            jwt_jwks_file: file.jwt_jwks_file.clone(),
            jwt_jwks_url: file.jwt_jwks_url.clone(),
            jwt_issuer: file.jwt_issuer.clone(),
            jwt_audience: file.jwt_audience.clone(),
            jwt_tenant_claim: file.jwt_tenant_claim.clone(),
            jwt_role_claim: file.jwt_role_claim.clone(),
            jwt_jwks_refresh: file.jwt_jwks_refresh.clone(),
        })?;
        let tls = args.tls.resolve(&file)?;
        let max_request_bytes = args
            .max_request_bytes
            .or(file.max_request_bytes)
            .unwrap_or(defaults.max_request_bytes);
        let limits = args.limits.resolve(&file, max_request_bytes)?;
        let answers = args.answers.resolve(&file);
        let retry = defaults.retry_defaults;
        let retry_defaults = RetryPolicy {
            max_attempts: args
                .queue_max_attempts
                .or(file.queue_max_attempts)
                .unwrap_or(retry.max_attempts),
            initial_delay: args
                .queue_initial_delay
                .or(file_duration(&file.queue_initial_delay)?)
                .unwrap_or(retry.initial_delay),
            max_delay: args
                .queue_max_delay
                .or(file_duration(&file.queue_max_delay)?)
                .unwrap_or(retry.max_delay),
            ..retry
        };
        retry_defaults
            .validate()
            .map_err(|error| format!("invalid queue settings: {error}"))?;
        let cache = match args
            .redis
            .or(file.redis)
            .filter(|url| !url.expose_secret().is_empty())
        {
            None => None,
            Some(url) => {
                let defaults = CacheSettings {
                    ca_cert: args.redis_ca_cert.or(file.redis_ca_cert),
                    ..CacheSettings::new(url)
                };
                Some(CacheSettings {
                    prefix: args
                        .cache_prefix
                        .or(file.cache_prefix)
                        .unwrap_or(defaults.prefix.clone()),
                    ttl: args
                        .cache_ttl
                        .or(file_duration(&file.cache_ttl)?)
                        .unwrap_or(defaults.ttl),
                    max_entry_bytes: args
                        .cache_max_bytes
                        .or(file.cache_max_bytes)
                        .unwrap_or(defaults.max_entry_bytes),
                    ..defaults
                })
            }
        };
        let stale_threshold = args
            .queue_stale_threshold
            .or(file_duration(&file.queue_stale_threshold)?)
            .unwrap_or(defaults.stale_threshold);
        let reap_interval = args
            .reap_interval
            .or(file_duration(&file.reap_interval)?)
            .unwrap_or(defaults.reap_interval);
        let log_format = args.log_format.or(file.log_format).unwrap_or_default();
        Ok(Self {
            listen: args
                .listen
                .or(file.listen)
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 50051))),
            database: match args.database.or(file.database) {
                Some(url) => url,
                None => default_database()?.into(),
            },
            tls,
            server: ServerSettings {
                max_request_bytes,
                drain_timeout: args
                    .drain_timeout
                    .or(file_drain)
                    .unwrap_or(defaults.drain_timeout),
                health_interval: defaults.health_interval,
                retry_defaults,
                stale_threshold,
                retention: args.retention.resolve(
                    file.retention.as_deref(),
                    file.prune_interval.as_deref(),
                    file.prune_batch_size,
                )?,
                reap_interval,
                auto_resume_hitl: args
                    .auto_resume_hitl
                    .or(file.auto_resume_hitl)
                    .unwrap_or(defaults.auto_resume_hitl),
                connections,
                auth,
                limits,
                answers,
            },
            store: StoreOptions {
                pool_size: args
                    .pool_size
                    .or(file.pool_size)
                    .unwrap_or(StoreOptions::default().pool_size),
            },
            log_format,
            admin_listen: args
                .admin_listen
                .or(file.admin_listen)
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 9464))),
            telemetry: crate::telemetry::TelemetrySettings {
                log_format,
                otlp_endpoint: args.telemetry.otlp_endpoint.or(file.otlp_endpoint),
                instance_id: args
                    .telemetry
                    .instance_id
                    .or(file.instance_id)
                    .unwrap_or_else(crate::telemetry::default_instance_id),
                prometheus: true,
            },
            cache,
        })
    }
}

fn read_file(path: &Path) -> Result<FileConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read config file {}: {error}", path.display()))?;
    toml::from_str(&text)
        .map_err(|error| format!("invalid config file {}: {error}", path.display()))
}

/// `sqlite://$HOME/.checkpointd/checkpointd.db`, creating the directory.
fn default_database() -> Result<String, String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or("HOME is not set; pass --database")?;
    let dir = home.join(".checkpointd");
    std::fs::create_dir_all(&dir)
        .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    Ok(format!("sqlite://{}", dir.join("checkpointd.db").display()))
}

/// Client connection flags of `checkpointd serve`.
#[derive(Debug, Default, Args)]
pub struct ConnectionArgs {
    /// A new connection must send the HTTP/2 preface within this; `0s`: no limit [default: 10s].
    #[arg(long, env = "CHECKPOINTD_HEADER_READ_TIMEOUT", value_parser = parse_duration)]
    pub header_read_timeout: Option<Duration>,
    /// A connection with no call in flight for this long is closed; `0s`: never [default: 5m].
    #[arg(long, env = "CHECKPOINTD_IDLE_TIMEOUT", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// How often the server pings each HTTP/2 connection; `0s`: no pings [default: 30s].
    #[arg(long, env = "CHECKPOINTD_HTTP2_KEEPALIVE_INTERVAL", value_parser = parse_duration)]
    pub http2_keepalive_interval: Option<Duration>,
    /// A ping unanswered this long closes the connection [default: 10s].
    #[arg(long, env = "CHECKPOINTD_HTTP2_KEEPALIVE_TIMEOUT", value_parser = parse_duration)]
    pub http2_keepalive_timeout: Option<Duration>,
    /// Concurrent calls one connection may have open [default: 200].
    #[arg(long, env = "CHECKPOINTD_MAX_CONCURRENT_STREAMS", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_streams: Option<u32>,
    /// Open client connections; more are closed at once [default: 4096].
    #[arg(long, env = "CHECKPOINTD_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
}

impl ConnectionArgs {
    /// These flags over the file's keys over the defaults.
    fn resolve(&self, file: &FileConfig) -> Result<ConnectionSettings, String> {
        let defaults = ConnectionSettings::default();
        let duration = |flag: Option<Duration>, key: &Option<String>, default: Duration| {
            let from_file = key.as_deref().map(parse_duration).transpose()?;
            Ok::<_, String>(flag.or(from_file).unwrap_or(default))
        };
        let settings = ConnectionSettings {
            header_read_timeout: duration(
                self.header_read_timeout,
                &file.header_read_timeout,
                defaults.header_read_timeout,
            )?,
            idle_timeout: duration(self.idle_timeout, &file.idle_timeout, defaults.idle_timeout)?,
            keepalive_interval: duration(
                self.http2_keepalive_interval,
                &file.http2_keepalive_interval,
                defaults.keepalive_interval,
            )?,
            keepalive_timeout: duration(
                self.http2_keepalive_timeout,
                &file.http2_keepalive_timeout,
                defaults.keepalive_timeout,
            )?,
            max_concurrent_streams: self
                .max_concurrent_streams
                .or(file.max_concurrent_streams)
                .unwrap_or(defaults.max_concurrent_streams),
            max_connections: self
                .max_connections
                .or(file.max_connections)
                .unwrap_or(defaults.max_connections),
        };
        if settings.max_concurrent_streams == 0 || settings.max_connections == 0 {
            return Err("max_concurrent_streams and max_connections must be at least 1".into());
        }
        if settings.keepalive_timeout.is_zero() {
            return Err("http2_keepalive_timeout must be positive".into());
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_the_file_overrides_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "listen = \"127.0.0.1:6000\"\ndatabase = \"memory://\"\ndrain_timeout = \"3s\"\n",
        )
        .unwrap();
        let config = ServeConfig::resolve(ServeArgs {
            config: Some(path.clone()),
            listen: Some("127.0.0.1:7000".parse().unwrap()),
            ..ServeArgs::default()
        })
        .unwrap();
        assert_eq!(config.listen.port(), 7000);
        assert_eq!(config.database.expose_secret(), "memory://");
        assert_eq!(config.server.drain_timeout, Duration::from_secs(3));
        assert_eq!(config.server.max_request_bytes, 16 * 1024 * 1024);
    }

    #[test]
    fn retention_flags_override_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "database = \"memory://\"\nretention = \"keep_last:3\"\nprune_interval = \"5m\"\n",
        )
        .unwrap();
        let config = ServeConfig::resolve(ServeArgs {
            config: Some(path),
            retention: RetentionArgs {
                prune_interval: Some(Duration::ZERO),
                ..RetentionArgs::default()
            },
            ..ServeArgs::default()
        })
        .unwrap();
        let retention = config.server.retention;
        assert_eq!(retention.default_policy, RetentionPolicy::KeepLast(3));
        assert_eq!(retention.prune_interval, Duration::ZERO);
        assert_eq!(retention.batch_size, 500);
    }

    #[test]
    fn the_reap_interval_comes_from_the_flag_over_the_file_over_five_seconds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "database = \"memory://\"\nreap_interval = \"30s\"\n").unwrap();
        let resolve = |reap_interval, config: Option<&Path>| {
            ServeConfig::resolve(ServeArgs {
                config: config.map(Path::to_path_buf),
                database: Some("memory://".into()),
                reap_interval,
                ..ServeArgs::default()
            })
            .unwrap()
            .server
            .reap_interval
        };
        assert_eq!(resolve(None, None), Duration::from_secs(5));
        assert_eq!(resolve(None, Some(&path)), Duration::from_secs(30));
        assert_eq!(resolve(Some(Duration::ZERO), Some(&path)), Duration::ZERO);
    }

    #[test]
    fn auto_resume_hitl_comes_from_the_flag_over_the_file_over_true() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "database = \"memory://\"\nauto_resume_hitl = false\n",
        )
        .unwrap();
        let resolve = |auto_resume_hitl, config: Option<&Path>| {
            ServeConfig::resolve(ServeArgs {
                config: config.map(Path::to_path_buf),
                database: Some("memory://".into()),
                auto_resume_hitl,
                ..ServeArgs::default()
            })
            .unwrap()
            .server
            .auto_resume_hitl
        };
        assert!(resolve(None, None));
        assert!(!resolve(None, Some(&path)));
        assert!(resolve(Some(true), Some(&path)));
    }

    #[test]
    fn secrets_never_show_in_debug_output() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "redis = \"rediss://user:redis-s3cret@cache:6380\"\n").unwrap();
        let args = ServeArgs {
            config: Some(path),
            database: Some("postgres://app:pg-s3cret@db/x?password=pg-s3cret2".into()),
            ..ServeArgs::default()
        };
        let printed_args = format!("{args:?}");
        let config = ServeConfig::resolve(args).unwrap();
        let printed = format!("{printed_args} {config:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        let cache = config.cache.unwrap();
        assert_eq!(
            cache.url.expose_secret(),
            "rediss://user:redis-s3cret@cache:6380"
        );
    }

    #[test]
    fn tls_needs_both_the_certificate_and_the_key() {
        let resolve = |cert: Option<&str>, key: Option<&str>, ca: Option<&str>| {
            ServeConfig::resolve(ServeArgs {
                database: Some("memory://".into()),
                tls: TlsArgs {
                    tls_cert: cert.map(PathBuf::from),
                    tls_key: key.map(PathBuf::from),
                    tls_client_ca: ca.map(PathBuf::from),
                    tls_reload_interval: None,
                },
                ..ServeArgs::default()
            })
            .map(|config| config.tls)
        };
        assert_eq!(resolve(None, None, None).unwrap(), None);
        let tls = resolve(Some("c.pem"), Some("k.pem"), Some("ca.pem"))
            .unwrap()
            .unwrap();
        assert_eq!(tls.client_ca, Some(PathBuf::from("ca.pem")));
        assert_eq!(tls.reload_interval, Duration::from_secs(2));
        assert!(resolve(Some("c.pem"), None, None).is_err());
        assert!(resolve(None, None, Some("ca.pem")).is_err());
    }

    #[test]
    fn unknown_file_keys_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "databse = \"memory://\"\n").unwrap();
        let error = ServeConfig::resolve(ServeArgs {
            config: Some(path),
            ..ServeArgs::default()
        })
        .unwrap_err()
        .to_string();
        assert!(error.contains("databse"), "{error}");
    }
}
