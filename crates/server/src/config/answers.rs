//! Settings bounding a load's answer: the page of messages a client that follows continuations
//! gets at a time, the whole answer an older client may still get, the bytes all answers may
//! hold, and how long an answer may take to be read.

use std::time::Duration;

use super::declare::{declared_defaults, settings};
use super::parse_duration;

settings! {
    /// Answer size flags of `checkpointd serve`.
    pub struct AnswerArgs => AnswerValues {
        /// Message bytes per page of a LoadLatest, LoadAtStep or Resume answer for a client that
        /// follows continuations (CLIENT_CAPABILITY_PAGED_MESSAGES).
        #[arg(
            long,
            env = "CHECKPOINTD_MAX_ANSWER_MESSAGE_BYTES",
            value_parser = clap::value_parser!(u64).range(1..)
        )]
        pub max_answer_message_bytes: u64 = "4194304";
        /// Message bytes a whole answer may carry for a client that does not; more get
        /// RESOURCE_EXHAUSTED (ANSWER_TOO_LARGE).
        #[arg(
            long,
            env = "CHECKPOINTD_MAX_UNPAGED_ANSWER_BYTES",
            value_parser = clap::value_parser!(u64).range(1..)
        )]
        pub max_unpaged_answer_bytes: u64 = "16777216";
        /// Answer bytes all loads in flight may hold at once; an answer finding no room within
        /// 5s gets UNAVAILABLE (OVERLOADED).
        #[arg(
            long,
            env = "CHECKPOINTD_MAX_INFLIGHT_ANSWER_BYTES",
            value_parser = clap::value_parser!(u64).range(1..)
        )]
        pub max_inflight_answer_bytes: u64 = "67108864";
        /// How long an answer may take to be read once it is ready: one still unsent then is
        /// cut off (its stream reset) and its share of the answer budget returned, so a client
        /// that stops reading cannot hold it. 0 waits for as long as the connection lives.
        #[arg(long, env = "CHECKPOINTD_ANSWER_SEND_TIMEOUT")]
        pub answer_send_timeout: Duration = "30s", parsed by parse_duration;
    }
}

/// The answer sizes of `checkpointd serve`; each is a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnswerLimits {
    /// Message bytes per page for a client that follows continuations.
    pub page_bytes: usize,
    /// Message bytes of a whole answer for a client that does not.
    pub max_unpaged_bytes: usize,
    /// Answer bytes all loads in flight may hold at once (see the answer budget).
    pub max_inflight_bytes: usize,
    /// How long an answer may take to be sent; zero for no bound.
    pub send_timeout: Duration,
}

impl Default for AnswerLimits {
    fn default() -> Self {
        Self::from(declared_defaults::<AnswerArgs>())
    }
}

impl From<AnswerValues> for AnswerLimits {
    fn from(values: AnswerValues) -> Self {
        // A u64 beyond this machine's usize could never be held anyway: no bound at all.
        let bytes = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
        Self {
            page_bytes: bytes(values.max_answer_message_bytes),
            max_unpaged_bytes: bytes(values.max_unpaged_answer_bytes),
            max_inflight_bytes: bytes(values.max_inflight_answer_bytes),
            send_timeout: values.answer_send_timeout,
        }
    }
}
