//! Retention's settings: the policy of runs that set none and the background pruner's schedule;
//! `checkpointd prune` reads the same flags.

use std::time::Duration;

use checkpointd_core::retention::RetentionPolicy;

use super::declare::{SettingsGroup, declared_defaults, settings};
use super::file::FileLayer;
use super::parse_duration;

settings! {
    /// Retention flags, shared by `serve` and `prune`.
    pub struct RetentionArgs => RetentionValues {
        /// Retention policy of runs that set none: `all`, `latest_only`, `keep_last:N` or
        /// `max_age:DURATION`.
        #[arg(long, env = "CHECKPOINTD_RETENTION")]
        pub retention: RetentionPolicy = "all", parsed by parse_policy;
        /// Time between background prune passes; `0s` turns the pruner off.
        #[arg(long, env = "CHECKPOINTD_PRUNE_INTERVAL")]
        pub prune_interval: Duration = "1m", parsed by parse_duration;
        /// Most runs read per page and checkpoints deleted per transaction.
        #[arg(
            long,
            env = "CHECKPOINTD_PRUNE_BATCH_SIZE",
            value_parser = clap::value_parser!(u32).range(1..)
        )]
        pub prune_batch_size: u32 = "500";
    }
}

pub fn parse_policy(raw: &str) -> Result<RetentionPolicy, String> {
    raw.parse()
        .map_err(|error: checkpointd_core::error::Error| error.to_string())
}

/// How the server retains checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetentionSettings {
    /// The policy of runs that set none.
    pub default_policy: RetentionPolicy,
    /// Time between two background passes; zero turns the background pruner off.
    pub prune_interval: Duration,
    /// Most runs read per page and most checkpoints deleted per transaction.
    pub batch_size: usize,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        Self::from(declared_defaults::<RetentionArgs>())
    }
}

impl From<RetentionValues> for RetentionSettings {
    fn from(values: RetentionValues) -> Self {
        Self {
            default_policy: values.retention,
            prune_interval: values.prune_interval,
            batch_size: values.prune_batch_size as usize,
        }
    }
}

impl RetentionArgs {
    /// These flags alone over the defaults (the commands that read no config file).
    pub fn settings(&self) -> Result<RetentionSettings, String> {
        self.resolve(&FileLayer::empty())
            .map(RetentionSettings::from)
    }
}
