//! Notification settings: the key webhook signing secrets are derived from, and how long the
//! outbox keeps what it has settled.

use std::path::PathBuf;
use std::time::Duration;

use super::declare::settings;
use super::parse_duration;

settings! {
    /// Notification flags of `checkpointd serve`.
    pub struct NotificationArgs => NotificationValues {
        /// File of at least 32 random bytes that webhook signing secrets are derived from;
        /// unset: webhook endpoints cannot be created and nothing is delivered.
        #[arg(long, env = "CHECKPOINTD_WEBHOOK_KEY_FILE")]
        pub webhook_key_file: PathBuf = unset;
        /// How long delivered and given-up webhook deliveries, and events left with no
        /// delivery, are kept before the pruner (every --prune-interval) deletes them;
        /// pending and failing ones are always kept. `0s` keeps everything.
        #[arg(long, env = "CHECKPOINTD_WEBHOOK_RETENTION")]
        pub webhook_retention: Duration = "7d", parsed by parse_duration;
    }
}
