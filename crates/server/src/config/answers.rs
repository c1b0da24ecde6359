//! Flags bounding a load's answer: the page of messages a client that follows continuations
//! gets at a time, and the whole answer an older client may still get.

use clap::Args;

use super::FileConfig;
use crate::grpc::AnswerLimits;

/// Answer size flags of `checkpointd serve`.
#[derive(Debug, Default, Args)]
pub struct AnswerArgs {
    /// Message bytes per page of a LoadLatest, LoadAtStep or Resume answer for a client that
    /// follows continuations (CLIENT_CAPABILITY_PAGED_MESSAGES) [default: 4 MiB].
    #[arg(long, env = "CHECKPOINTD_MAX_ANSWER_MESSAGE_BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_answer_message_bytes: Option<u64>,
    /// Message bytes a whole answer may carry for a client that does not; more get
    /// RESOURCE_EXHAUSTED (ANSWER_TOO_LARGE) [default: 16 MiB].
    #[arg(long, env = "CHECKPOINTD_MAX_UNPAGED_ANSWER_BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_unpaged_answer_bytes: Option<u64>,
    /// Answer bytes all loads in flight may hold at once; an answer finding no room within 5s
    /// gets UNAVAILABLE (OVERLOADED) [default: 64 MiB].
    #[arg(long, env = "CHECKPOINTD_MAX_INFLIGHT_ANSWER_BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_inflight_answer_bytes: Option<u64>,
}

impl AnswerArgs {
    /// These flags over the file's keys over the defaults.
    pub(super) fn resolve(&self, file: &FileConfig) -> AnswerLimits {
        let defaults = AnswerLimits::default();
        let bytes = |flag: Option<u64>, key: Option<u64>, default: usize| {
            flag.or(key)
                .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        AnswerLimits {
            page_bytes: bytes(
                self.max_answer_message_bytes,
                file.max_answer_message_bytes,
                defaults.page_bytes,
            ),
            max_unpaged_bytes: bytes(
                self.max_unpaged_answer_bytes,
                file.max_unpaged_answer_bytes,
                defaults.max_unpaged_bytes,
            ),
            max_inflight_bytes: bytes(
                self.max_inflight_answer_bytes,
                file.max_inflight_answer_bytes,
                defaults.max_inflight_bytes,
            ),
        }
    }
}
