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
use crate::grpc::{ConnectionSettings, ServerSettings};
use crate::maintenance::RetentionSettings;
use crate::queue::RetryPolicy;
use crate::store::StoreOptions;
use crate::store::retention::RetentionPolicy;

mod limits;
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
    /// memory://, sqlite://PATH or postgres://... [default: sqlite://~/.checkpointd/checkpointd.db].
    #[arg(long, env = "CHECKPOINTD_DATABASE", hide_env_values = true)]
    pub database: Option<String>,
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
    /// Redis URL of the hot cache, e.g. `redis://127.0.0.1:6379`; unset = no cache.
    #[arg(long, env = "CHECKPOINTD_REDIS", hide_env_values = true)]
    pub redis: Option<String>,
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
    #[command(flatten)]
    pub limits: LimitArgs,
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
        .map_err(|error: crate::error::Error| error.to_string())
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
    database: Option<String>,
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
    redis: Option<String>,
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
    // Request memory (LimitArgs).
    max_messages_per_save: Option<u32>,
    max_metadata_entries: Option<u32>,
    max_inflight_request_bytes: Option<usize>,
}

/// Resolved settings of `checkpointd serve`.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub database: String,
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
            database: "memory://".to_owned(),
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
    pub fn resolve(args: ServeArgs) -> Result<Self, String> {
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let defaults = ServerSettings::default();
        let file_duration = |raw: &Option<String>| raw.as_deref().map(parse_duration).transpose();
        let file_drain = file_duration(&file.drain_timeout)?;
        let connections = args.connections.resolve(&file)?;
        let max_request_bytes = args
            .max_request_bytes
            .or(file.max_request_bytes)
            .unwrap_or(defaults.max_request_bytes);
        let limits = args.limits.resolve(&file, max_request_bytes)?;
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
        let cache = match args.redis.or(file.redis).filter(|url| !url.is_empty()) {
            None => None,
            Some(url) => {
                let defaults = CacheSettings::new(url);
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
                None => default_database()?,
            },
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
                limits,
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
        assert_eq!(config.database, "memory://");
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
    fn unknown_file_keys_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "databse = \"memory://\"\n").unwrap();
        let error = ServeConfig::resolve(ServeArgs {
            config: Some(path),
            ..ServeArgs::default()
        })
        .unwrap_err();
        assert!(error.contains("databse"), "{error}");
    }
}
