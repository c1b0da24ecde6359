//! Settings bounding a load's answer: the page of messages a client that follows continuations
//! gets at a time, and the whole answer an older client may still get.

use super::declare::{declared_defaults, settings};

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
        }
    }
}
