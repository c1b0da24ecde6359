//! Flags bounding the memory requests may take: caps on a Save's repeated fields, a
//! server-wide budget of request bytes in flight with each tenant's and each connection's share
//! of it, and the time a request's body may take to arrive.

use std::time::Duration;

use clap::Args;

use super::{FileConfig, parse_duration};
use crate::grpc::RequestLimits;

/// Request memory flags of `checkpointd serve`.
#[derive(Debug, Default, Args)]
pub struct LimitArgs {
    /// Messages one Save may append; more get RESOURCE_EXHAUSTED [default: 10000].
    #[arg(long, env = "CHECKPOINTD_MAX_MESSAGES_PER_SAVE", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_messages_per_save: Option<u32>,
    /// Metadata entries one Save may carry, and entries of a ListCheckpoints metadata filter;
    /// more get RESOURCE_EXHAUSTED [default: 1000].
    #[arg(long, env = "CHECKPOINTD_MAX_METADATA_ENTRIES", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_metadata_entries: Option<u32>,
    /// Request bytes all calls in flight may hold at once; a call that finds no room within 5s
    /// gets UNAVAILABLE [default: 4 x max-request-bytes].
    #[arg(long, env = "CHECKPOINTD_MAX_INFLIGHT_REQUEST_BYTES")]
    pub max_inflight_request_bytes: Option<usize>,
    /// Request bytes the calls of one tenant may hold at once; a call over it waits on its own
    /// tenant's share, then gets UNAVAILABLE [default: half the budget].
    #[arg(long, env = "CHECKPOINTD_MAX_TENANT_REQUEST_BYTES")]
    pub max_tenant_request_bytes: Option<usize>,
    /// Request bytes the calls on one connection may hold at once [default: max-request-bytes].
    #[arg(long, env = "CHECKPOINTD_MAX_CONNECTION_REQUEST_BYTES")]
    pub max_connection_request_bytes: Option<usize>,
    /// How long a request's body may take to arrive once it holds its bytes; a slower one gets
    /// DEADLINE_EXCEEDED (BODY_TIMEOUT) and gives them back [default: 30s].
    #[arg(long, env = "CHECKPOINTD_REQUEST_BODY_TIMEOUT", value_parser = parse_duration)]
    pub request_body_timeout: Option<Duration>,
}

impl LimitArgs {
    /// These flags over the file's keys over the defaults; `max_request_bytes` is resolved.
    pub(super) fn resolve(
        &self,
        file: &FileConfig,
        max_request_bytes: usize,
    ) -> Result<RequestLimits, String> {
        let defaults = RequestLimits::default();
        let count = |flag: Option<u32>, key: Option<u32>, default: usize| {
            flag.or(key).map_or(default, |n| n as usize)
        };
        let limits = RequestLimits {
            max_messages_per_save: count(
                self.max_messages_per_save,
                file.max_messages_per_save,
                defaults.max_messages_per_save,
            ),
            max_metadata_entries: count(
                self.max_metadata_entries,
                file.max_metadata_entries,
                defaults.max_metadata_entries,
            ),
            max_inflight_request_bytes: self
                .max_inflight_request_bytes
                .or(file.max_inflight_request_bytes),
            max_tenant_request_bytes: self
                .max_tenant_request_bytes
                .or(file.max_tenant_request_bytes),
            max_connection_request_bytes: self
                .max_connection_request_bytes
                .or(file.max_connection_request_bytes),
            body_timeout: match self.request_body_timeout {
                Some(timeout) => timeout,
                None => file
                    .request_body_timeout
                    .as_deref()
                    .map(parse_duration)
                    .transpose()?
                    .unwrap_or(defaults.body_timeout),
            },
            ..defaults
        };
        if limits.body_timeout.is_zero() {
            return Err("request_body_timeout must be more than zero".into());
        }
        for (name, share) in [
            ("max_tenant_request_bytes", limits.max_tenant_request_bytes),
            (
                "max_connection_request_bytes",
                limits.max_connection_request_bytes,
            ),
        ] {
            if let Some(share) = share
                && share < max_request_bytes
            {
                return Err(format!(
                    "{name} ({share}) must be at least max_request_bytes ({max_request_bytes}), \
                     or the largest request could never be served"
                ));
            }
        }
        if limits.max_messages_per_save == 0 || limits.max_metadata_entries == 0 {
            return Err("max_messages_per_save and max_metadata_entries must be at least 1".into());
        }
        if let Some(budget) = limits.max_inflight_request_bytes
            && budget < max_request_bytes
        {
            return Err(format!(
                "max_inflight_request_bytes ({budget}) must be at least max_request_bytes \
                 ({max_request_bytes}), or the largest request could never be served"
            ));
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::config::{ServeArgs, ServeConfig};
    use crate::serve_error::ServeError;

    fn resolve(file: &str, args: super::LimitArgs) -> Result<ServeConfig, ServeError> {
        let dir = tempfile::tempdir().unwrap();
        let path: PathBuf = dir.path().join("c.toml");
        std::fs::write(&path, format!("database = \"memory://\"\n{file}")).unwrap();
        ServeConfig::resolve(ServeArgs {
            config: Some(path),
            limits: args,
            ..ServeArgs::default()
        })
    }

    #[test]
    fn limits_come_from_the_flag_over_the_file_over_the_defaults() {
        let config = resolve("", super::LimitArgs::default()).unwrap();
        assert_eq!(config.server.limits.max_messages_per_save, 10_000);
        assert_eq!(config.server.limits.max_metadata_entries, 1_000);
        assert_eq!(
            config
                .server
                .limits
                .inflight_budget(config.server.max_request_bytes),
            64 << 20
        );
        let config = resolve(
            "max_messages_per_save = 5\nmax_metadata_entries = 6\nmax_inflight_request_bytes = 99999999\n",
            super::LimitArgs {
                max_messages_per_save: Some(7),
                ..super::LimitArgs::default()
            },
        )
        .unwrap();
        assert_eq!(config.server.limits.max_messages_per_save, 7);
        assert_eq!(config.server.limits.max_metadata_entries, 6);
        assert_eq!(
            config.server.limits.max_inflight_request_bytes,
            Some(99_999_999)
        );
    }

    #[test]
    fn shares_and_the_body_timeout_come_from_the_flag_over_the_file_over_the_defaults() {
        let config = resolve("", super::LimitArgs::default()).unwrap();
        let limits = config.server.limits;
        let sizes = limits.budget_sizes(config.server.max_request_bytes);
        assert_eq!(
            (sizes.server, sizes.tenant, sizes.connection),
            (64 << 20, 32 << 20, 16 << 20)
        );
        assert_eq!(limits.body_timeout, std::time::Duration::from_secs(30));
        let config = resolve(
            "max_request_bytes = 1000
max_tenant_request_bytes = 3000
\
             max_connection_request_bytes = 2000
request_body_timeout = \"7s\"\n",
            super::LimitArgs {
                max_tenant_request_bytes: Some(2500),
                ..super::LimitArgs::default()
            },
        )
        .unwrap();
        let limits = config.server.limits;
        assert_eq!(limits.max_tenant_request_bytes, Some(2500));
        assert_eq!(limits.max_connection_request_bytes, Some(2000));
        assert_eq!(limits.body_timeout, std::time::Duration::from_secs(7));
    }

    #[test]
    fn a_share_below_the_largest_request_is_refused() {
        let error = resolve(
            "max_request_bytes = 1000
max_connection_request_bytes = 999
",
            super::LimitArgs::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("max_connection_request_bytes"), "{error}");
    }

    #[test]
    fn a_budget_below_the_largest_request_is_refused() {
        let error = resolve(
            "max_request_bytes = 1000\nmax_inflight_request_bytes = 999\n",
            super::LimitArgs::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("max_inflight_request_bytes"), "{error}");
    }
}
