//! Configuration, layered: declared defaults < config file < `CHECKPOINTD_*` environment <
//! flags. Each setting is declared once, in its component's group (`settings!` in
//! [`declare`]), which gives it its flag, variable, file key, default and help;
//! [`ServeConfig::resolve`] is the one place the layers meet and the settings tree is built.
//!
//! The command line that picks a command lives with the binary (`main.rs`): this module knows
//! only settings, so it depends on none of the commands' modules (runner, bench, cli).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use checkpointd_core::secret::{ExposeSecret, SecretString};
use checkpointd_storage::store::StoreOptions;

mod answers;
mod auth;
mod cache;
mod connections;
mod console;
pub(crate) mod declare;
pub(crate) mod file;
mod limits;
mod notifications;
mod outbound;
mod queue;
mod retention;
mod server;
mod settings;
#[cfg(test)]
mod tests;
mod tls;

pub use answers::{AnswerArgs, AnswerLimits};
pub use auth::{AuthArgs, AuthSettings, JwtKeys, JwtSettings, check_url};
pub use cache::{CacheArgs, CacheSettings};
pub use checkpointd_telemetry::LogFormat;
pub use connections::{ConnectionArgs, ConnectionSettings};
pub use console::{ConsoleArgs, ConsoleSettings, OIDC_CALLBACK_PATH, OidcSettings};
pub use declare::SettingsGroup;
pub use limits::{LimitArgs, RequestLimits};
pub use outbound::OutboundArgs;
pub use queue::QueueArgs;
pub use retention::{RetentionArgs, RetentionSettings, parse_policy};
pub use server::ServerSettings;
pub use settings::{Settings, SettingsArgs};
pub use tls::{TlsArgs, TlsSettings};

use file::FileLayer;

/// Flags of `checkpointd serve`: the config file, then every setting.
#[derive(Debug, Default, Args)]
pub struct ServeArgs {
    /// TOML file with any of the settings below (keys as the flags, with underscores).
    #[arg(long, env = "CHECKPOINTD_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// Resolved settings of `checkpointd serve`: the settings tree.
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
    /// The web console, when `--console-listen` is set.
    pub console: Option<ConsoleSettings>,
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
            console: None,
            telemetry: crate::telemetry::TelemetrySettings {
                log_format: LogFormat::default(),
                otlp_endpoint: None,
                instance_id: crate::telemetry::default_instance_id(),
                prometheus: true,
            },
        }
    }
}

impl ServeConfig {
    /// Applies the layers (flags and environment, already merged by clap, over the file over
    /// the declared defaults), then builds the settings tree from the result.
    pub fn resolve(args: ServeArgs) -> Result<Self, String> {
        let file = match &args.config {
            Some(path) => FileLayer::read(path, &declare::keys::<SettingsArgs>())?,
            None => FileLayer::empty(),
        };
        Self::from_settings(args.settings.resolve(&file)?)
    }

    /// The settings tree of resolved settings; the defaults that depend on the machine (the
    /// database under `$HOME`, the instance id) are computed here.
    fn from_settings(settings: Settings) -> Result<Self, String> {
        let database = match settings.database.clone() {
            Some(url) => url,
            None => default_database()?.into(),
        };
        let telemetry = crate::telemetry::TelemetrySettings {
            log_format: settings.log_format,
            otlp_endpoint: settings.otlp_endpoint.clone(),
            instance_id: settings
                .instance_id
                .clone()
                .unwrap_or_else(crate::telemetry::default_instance_id),
            prometheus: true,
        };
        Ok(Self {
            listen: settings.listen,
            database,
            tls: TlsSettings::from_values(settings.tls.clone())?,
            store: StoreOptions {
                pool_size: settings.pool_size,
                statements: settings.postgres_statements,
                listen_url: settings
                    .postgres_listen_url
                    .as_ref()
                    .map(|url| url.expose_secret().to_owned()),
            },
            log_format: settings.log_format,
            cache: CacheSettings::from_values(settings.cache.clone()),
            admin_listen: settings.admin_listen,
            console: ConsoleSettings::from_values(
                settings.console.clone(),
                &settings.auth,
                settings.tls.tls_cert.is_some(),
            )?,
            telemetry,
            server: ServerSettings::from_settings(settings)?,
        })
    }
}

pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    humantime::parse_duration(raw).map_err(|error| format!("invalid duration {raw:?}: {error}"))
}

/// `text` or `json`, as `--log-format` takes it.
pub fn parse_log_format(raw: &str) -> Result<LogFormat, String> {
    <LogFormat as clap::ValueEnum>::from_str(raw, false)
        .map_err(|_| format!("invalid log format {raw:?}: use text or json"))
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
