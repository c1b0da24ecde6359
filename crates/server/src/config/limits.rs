//! Flags bounding the memory requests may take: caps on a Save's repeated fields and a
//! server-wide budget of request bytes in flight.

use clap::Args;

use super::FileConfig;
use crate::grpc::RequestLimits;

/// Request memory flags of `checkpointd serve`.
#[derive(Debug, Default, Args)]
pub struct LimitArgs {
    /// Messages one Save may append; more get RESOURCE_EXHAUSTED [default: 10000].
    #[arg(long, env = "CHECKPOINTD_MAX_MESSAGES_PER_SAVE", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_messages_per_save: Option<u32>,
    /// Metadata entries one Save may carry; more get RESOURCE_EXHAUSTED [default: 1000].
    #[arg(long, env = "CHECKPOINTD_MAX_METADATA_ENTRIES", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_metadata_entries: Option<u32>,
    /// Request bytes all calls in flight may hold at once; a call that finds no room within 5s
    /// gets UNAVAILABLE [default: 4 x max-request-bytes].
    #[arg(long, env = "CHECKPOINTD_MAX_INFLIGHT_REQUEST_BYTES")]
    pub max_inflight_request_bytes: Option<usize>,
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
            ..defaults
        };
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

    fn resolve(file: &str, args: super::LimitArgs) -> Result<ServeConfig, String> {
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
    fn a_budget_below_the_largest_request_is_refused() {
        let error = resolve(
            "max_request_bytes = 1000\nmax_inflight_request_bytes = 999\n",
            super::LimitArgs::default(),
        )
        .unwrap_err();
        assert!(error.contains("max_inflight_request_bytes"), "{error}");
    }
}
