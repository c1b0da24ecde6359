//! Every setting of `checkpointd serve`, each declared once: the server-wide ones here, each
//! component's in its own group (queue, cache, retention, connections, auth, TLS, request and
//! answer limits, console, notifications, outbound HTTP), all flattened into one command line
//! and one flat config file.

use std::net::SocketAddr;
use std::time::Duration;

use checkpointd_core::secret::{SecretString, parse_secret};

use super::answers::AnswerArgs;
use super::auth::AuthArgs;
use super::cache::CacheArgs;
use super::connections::ConnectionArgs;
use super::console::ConsoleArgs;
use super::declare::settings;
use super::limits::LimitArgs;
use super::notifications::NotificationArgs;
use super::outbound::OutboundArgs;
use super::queue::QueueArgs;
use super::retention::RetentionArgs;
use super::tls::TlsArgs;
use super::{LogFormat, parse_duration, parse_log_format};
use checkpointd_storage::store::PostgresStatements;

/// `prepared` or `unnamed`, as `--postgres-statements` takes it.
fn parse_postgres_statements(raw: &str) -> Result<PostgresStatements, String> {
    raw.parse()
}

settings! {
    /// The settings of `checkpointd serve`; each flag also reads a `CHECKPOINTD_*` variable.
    pub struct SettingsArgs => Settings {
        /// Address to listen on.
        #[arg(long, env = "CHECKPOINTD_LISTEN")]
        pub listen: SocketAddr = "127.0.0.1:50051";
        /// memory://, sqlite://PATH or postgres://... (`sslmode` and `sslrootcert` honoured).
        #[arg(long, env = "CHECKPOINTD_DATABASE", hide_env_values = true)]
        pub database: SecretString = (computed "sqlite://~/.checkpointd/checkpointd.db"),
            parsed by parse_secret;
        /// Largest request accepted, in bytes.
        #[arg(long, env = "CHECKPOINTD_MAX_REQUEST_BYTES")]
        pub max_request_bytes: usize = "16777216";
        /// How long in-flight calls may finish after SIGTERM, e.g. `10s`.
        #[arg(long, env = "CHECKPOINTD_DRAIN_TIMEOUT")]
        pub drain_timeout: Duration = "10s", parsed by parse_duration;
        /// Postgres connection pool size.
        #[arg(long, env = "CHECKPOINTD_POOL_SIZE")]
        pub pool_size: usize = "16";
        /// How Postgres statements are sent: `prepared` (named, prepared once per connection)
        /// or `unnamed` (none outlives its transaction), which a transaction-mode pooler such as
        /// PgBouncer, RDS Proxy or Supavisor needs.
        #[arg(long, env = "CHECKPOINTD_POSTGRES_STATEMENTS")]
        pub postgres_statements: PostgresStatements = "prepared",
            parsed by parse_postgres_statements;
        /// A direct (or session-pooled) Postgres URL for the API key change `LISTEN`, when
        /// `--database` goes through a transaction-mode pooler. Unset there: key caches resync
        /// every few seconds instead.
        #[arg(long, env = "CHECKPOINTD_POSTGRES_LISTEN_URL", hide_env_values = true)]
        pub postgres_listen_url: SecretString = unset, parsed by parse_secret;
        /// Log format: `text` or `json`.
        #[arg(long, env = "CHECKPOINTD_LOG_FORMAT")]
        pub log_format: LogFormat = "text", parsed by parse_log_format;
        /// Admin HTTP address serving `/metrics` and `/healthz`.
        #[arg(long, env = "CHECKPOINTD_ADMIN_LISTEN")]
        pub admin_listen: SocketAddr = "127.0.0.1:9464";
        /// OTLP/gRPC collector for traces and metrics, e.g. `http://collector:4317`; falls back
        /// to OTEL_EXPORTER_OTLP_ENDPOINT. Unset: no exporter.
        #[arg(long, env = "CHECKPOINTD_OTLP_ENDPOINT")]
        pub otlp_endpoint: String = unset;
        /// `service.instance.id` on traces and metrics.
        #[arg(long, env = "CHECKPOINTD_INSTANCE_ID")]
        pub instance_id: String = (computed "hostname-pid");
        #[command(flatten)]
        pub queue: QueueArgs;
        #[command(flatten)]
        pub cache: CacheArgs;
        #[command(flatten)]
        pub retention: RetentionArgs;
        #[command(flatten)]
        pub connections: ConnectionArgs;
        #[command(flatten)]
        pub auth: Box<AuthArgs>;
        #[command(flatten)]
        pub tls: TlsArgs;
        #[command(flatten)]
        pub limits: LimitArgs;
        #[command(flatten)]
        pub answers: Box<AnswerArgs>;
        #[command(flatten)]
        pub console: Box<ConsoleArgs>;
        #[command(flatten)]
        pub notifications: Box<NotificationArgs>;
        #[command(flatten)]
        pub outbound: OutboundArgs;
    }
}
