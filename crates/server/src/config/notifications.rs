//! Notification settings: the key webhook signing secrets are derived from.

use std::path::PathBuf;

use super::declare::settings;

settings! {
    /// Notification flags of `checkpointd serve`.
    pub struct NotificationArgs => NotificationValues {
        /// File of at least 32 random bytes that webhook signing secrets are derived from;
        /// unset: webhook endpoints cannot be created and nothing is delivered.
        #[arg(long, env = "CHECKPOINTD_WEBHOOK_KEY_FILE")]
        pub webhook_key_file: PathBuf = unset;
    }
}
