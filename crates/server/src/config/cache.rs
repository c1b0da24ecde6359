//! The Redis cache's settings: where Redis is, and what the cache keeps for how long.

use std::path::PathBuf;
use std::time::Duration;

use checkpointd_core::secret::{ExposeSecret, SecretString, parse_secret};

use super::declare::{declared_defaults, settings};
use super::parse_duration;

settings! {
    /// Cache flags of `checkpointd serve`.
    pub struct CacheArgs => CacheValues {
        /// Redis URL of the hot cache, e.g. `redis://127.0.0.1:6379`, `redis://user:pw@host` or
        /// `rediss://host:6380` (TLS); unset = no cache.
        #[arg(long, env = "CHECKPOINTD_REDIS", hide_env_values = true)]
        pub redis: SecretString = unset, parsed by parse_secret;
        /// PEM CA bundle that signed the `rediss://` server's certificate.
        #[arg(long, env = "CHECKPOINTD_REDIS_CA_CERT")]
        pub redis_ca_cert: PathBuf = (computed "system roots");
        /// Prefix of every cache key, so deployments can share one Redis.
        #[arg(long, env = "CHECKPOINTD_CACHE_PREFIX")]
        pub cache_prefix: String = "checkpointd";
        /// How long a cache entry lives after its last write.
        #[arg(long, env = "CHECKPOINTD_CACHE_TTL")]
        pub cache_ttl: Duration = "1h", parsed by parse_duration;
        /// Checkpoints larger than this (state plus messages, bytes) are not cached.
        #[arg(long, env = "CHECKPOINTD_CACHE_MAX_BYTES")]
        pub cache_max_bytes: usize = "1048576";
    }
}

/// How long a Redis call may take before Redis counts as down for a while; not a flag.
const REDIS_TIMEOUT: Duration = Duration::from_millis(250);

/// How the cache behaves; see the `--cache-*` flags.
#[derive(Clone, Debug)]
pub struct CacheSettings {
    /// `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS; secret, as it may hold
    /// a password.
    pub url: SecretString,
    /// PEM CA bundle for a `rediss://` server's certificate; `None`: the system's roots.
    pub ca_cert: Option<PathBuf>,
    /// Prepended to every key, so several deployments can share one Redis.
    pub prefix: String,
    /// How long an entry lives after its last write.
    pub ttl: Duration,
    /// Checkpoints whose state and messages exceed this many bytes are not cached.
    pub max_entry_bytes: usize,
    /// How long a Redis call may take before Redis counts as down for a while.
    pub timeout: Duration,
}

impl CacheSettings {
    /// The cache at `url` with the declared defaults.
    pub fn new(url: impl Into<SecretString>) -> Self {
        Self::at(url.into(), declared_defaults::<CacheArgs>())
    }

    /// The cache these values describe; `None` when no Redis URL is set.
    pub(super) fn from_values(values: CacheValues) -> Option<Self> {
        let url = values
            .redis
            .clone()
            .filter(|url| !url.expose_secret().is_empty())?;
        Some(Self::at(url, values))
    }

    fn at(url: SecretString, values: CacheValues) -> Self {
        Self {
            url,
            ca_cert: values.redis_ca_cert,
            prefix: values.cache_prefix,
            ttl: values.cache_ttl,
            max_entry_bytes: values.cache_max_bytes,
            timeout: REDIS_TIMEOUT,
        }
    }
}
