//! Configuration, layered: built-in defaults < config file < `CHECKPOINTD_*` environment < flags.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use serde::Deserialize;

use crate::grpc::ServerSettings;
use crate::queue::RetryPolicy;
use crate::store::StoreOptions;

/// The `checkpointd` command line.
#[derive(Debug, Parser)]
#[command(
    name = "checkpointd",
    version,
    about = "Crash recovery for long-running AI agents"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gRPC server.
    Serve(ServeArgs),
    /// Run the bundled runner: claim tasks and drive the demo agent through crashes.
    Worker(crate::runner::worker_command::WorkerArgs),
    /// Run the reference scenario end to end: a worker crashes at step 5, another resumes at 3.
    Demo(crate::runner::demo::DemoArgs),
    /// Measure Save and LoadLatest against raw database statements.
    Bench(crate::bench::BenchArgs),
    /// Inspect and steer queued tasks: list, approve, reject, requeue, cancel.
    Tasks(crate::cli::TasksArgs),
    /// Inspect and recover runs: show checkpoints with validity, resume.
    Runs(crate::cli::RunsArgs),
}

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
    /// Admin HTTP address serving `/metrics` and `/healthz` [default: 127.0.0.1:9464].
    #[arg(long, env = "CHECKPOINTD_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub telemetry: crate::telemetry::TelemetryArgs,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

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
    admin_listen: Option<SocketAddr>,
    otlp_endpoint: Option<String>,
    instance_id: Option<String>,
}

/// Resolved settings of `checkpointd serve`.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub database: String,
    pub server: ServerSettings,
    pub store: StoreOptions,
    pub log_format: LogFormat,
    pub admin_listen: SocketAddr,
    pub telemetry: crate::telemetry::TelemetrySettings,
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
        let stale_threshold = args
            .queue_stale_threshold
            .or(file_duration(&file.queue_stale_threshold)?)
            .unwrap_or(defaults.stale_threshold);
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
                max_request_bytes: args
                    .max_request_bytes
                    .or(file.max_request_bytes)
                    .unwrap_or(defaults.max_request_bytes),
                drain_timeout: args
                    .drain_timeout
                    .or(file_drain)
                    .unwrap_or(defaults.drain_timeout),
                health_interval: defaults.health_interval,
                retry_defaults,
                stale_threshold,
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
