//! Client connections' settings: how long a connection may take to start and sit idle, the
//! HTTP/2 keepalive, and how many connections and calls per connection are allowed.

use std::time::Duration;

use super::declare::{declared_defaults, settings};
use super::parse_duration;

settings! {
    /// Client connection flags of `checkpointd serve`.
    pub struct ConnectionArgs => ConnectionValues {
        /// A new connection must send the HTTP/2 preface within this; `0s`: no limit.
        #[arg(long, env = "CHECKPOINTD_HEADER_READ_TIMEOUT")]
        pub header_read_timeout: Duration = "10s", parsed by parse_duration;
        /// A connection with no call in flight for this long is closed; `0s`: never.
        #[arg(long, env = "CHECKPOINTD_IDLE_TIMEOUT")]
        pub idle_timeout: Duration = "5m", parsed by parse_duration;
        /// How often the server pings each HTTP/2 connection; `0s`: no pings.
        #[arg(long, env = "CHECKPOINTD_HTTP2_KEEPALIVE_INTERVAL")]
        pub http2_keepalive_interval: Duration = "30s", parsed by parse_duration;
        /// A ping unanswered this long closes the connection.
        #[arg(long, env = "CHECKPOINTD_HTTP2_KEEPALIVE_TIMEOUT")]
        pub http2_keepalive_timeout: Duration = "10s", parsed by parse_duration;
        /// Concurrent calls one connection may have open.
        #[arg(
            long,
            env = "CHECKPOINTD_MAX_CONCURRENT_STREAMS",
            value_parser = clap::value_parser!(u32).range(1..)
        )]
        pub max_concurrent_streams: u32 = "200";
        /// Open client connections; more are closed at once.
        #[arg(long, env = "CHECKPOINTD_MAX_CONNECTIONS")]
        pub max_connections: usize = "4096";
    }
}

/// Limits on client connections; each is a `serve` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionSettings {
    /// A new connection must send the HTTP/2 connection preface within this; zero: no limit.
    pub header_read_timeout: Duration,
    /// A connection with no call in flight for this long is closed; zero: never.
    pub idle_timeout: Duration,
    /// The server pings an HTTP/2 connection this often; zero: no pings.
    pub keepalive_interval: Duration,
    /// A ping unanswered for this long closes the connection.
    pub keepalive_timeout: Duration,
    /// Concurrent calls (HTTP/2 streams) one connection may have open.
    pub max_concurrent_streams: u32,
    /// Open client connections; more are closed as soon as they are accepted.
    pub max_connections: usize,
}

impl Default for ConnectionSettings {
    fn default() -> Self {
        Self::try_from(declared_defaults::<ConnectionArgs>())
            .expect("the declared connection defaults are valid")
    }
}

impl TryFrom<ConnectionValues> for ConnectionSettings {
    type Error = String;

    fn try_from(values: ConnectionValues) -> Result<Self, String> {
        let settings = Self {
            header_read_timeout: values.header_read_timeout,
            idle_timeout: values.idle_timeout,
            keepalive_interval: values.http2_keepalive_interval,
            keepalive_timeout: values.http2_keepalive_timeout,
            max_concurrent_streams: values.max_concurrent_streams,
            max_connections: values.max_connections,
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
