//! The task queue's settings: the retry policy of tasks enqueued without one, the lease of
//! claims that name none, the reaper's schedule and what an approval does.

use std::time::Duration;

use checkpointd_core::queue::RetryPolicy;

use super::declare::settings;
use super::parse_duration;

settings! {
    /// Task queue flags of `checkpointd serve`.
    pub struct QueueArgs => QueueValues {
        /// Total runs a task may have, the first included.
        #[arg(long, env = "CHECKPOINTD_QUEUE_MAX_ATTEMPTS")]
        pub queue_max_attempts: u32 = "5";
        /// Delay before a task's first retry.
        #[arg(long, env = "CHECKPOINTD_QUEUE_INITIAL_DELAY")]
        pub queue_initial_delay: Duration = "1s", parsed by parse_duration;
        /// Longest delay between retries.
        #[arg(long, env = "CHECKPOINTD_QUEUE_MAX_DELAY")]
        pub queue_max_delay: Duration = "5m", parsed by parse_duration;
        /// Lease given to claims that ask for none: a running task not heartbeated for this long
        /// is stale and may be reclaimed.
        #[arg(long, env = "CHECKPOINTD_QUEUE_STALE_THRESHOLD")]
        pub queue_stale_threshold: Duration = "30s", parsed by parse_duration;
        /// Time between reaper passes, which bury stale tasks on their final attempt as dead
        /// letters; `0s` turns the reaper off.
        #[arg(long, env = "CHECKPOINTD_REAP_INTERVAL")]
        pub reap_interval: Duration = "5s", parsed by parse_duration;
        /// Whether an approved or rejected task is claimable at once (`true`) or stays parked in
        /// input_required until `checkpointd tasks resume ID` (`false`), for tasks enqueued
        /// without a say.
        #[arg(long, env = "CHECKPOINTD_AUTO_RESUME_HITL")]
        pub auto_resume_hitl: bool = "true";
    }
}

impl QueueValues {
    /// The retry policy of tasks enqueued without one: these bounds over the policy's own
    /// backoff shape.
    pub fn retry_defaults(&self) -> Result<RetryPolicy, String> {
        let policy = RetryPolicy {
            max_attempts: self.queue_max_attempts,
            initial_delay: self.queue_initial_delay,
            max_delay: self.queue_max_delay,
            ..RetryPolicy::default()
        };
        policy
            .validate()
            .map_err(|error| format!("invalid queue settings: {error}"))?;
        Ok(policy)
    }
}
