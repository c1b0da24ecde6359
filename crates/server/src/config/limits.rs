//! Settings bounding the memory requests may take: caps on a Save's repeated fields, a
//! server-wide budget of request bytes in flight with each tenant's and each connection's share
//! of it, and the time a request's body may take to arrive.

use std::time::Duration;

use super::declare::{declared_defaults, settings};
use super::parse_duration;

settings! {
    /// Request memory flags of `checkpointd serve`.
    pub struct LimitArgs => LimitValues {
        /// Messages one Save may append; more get RESOURCE_EXHAUSTED.
        #[arg(
            long,
            env = "CHECKPOINTD_MAX_MESSAGES_PER_SAVE",
            value_parser = clap::value_parser!(u32).range(1..)
        )]
        pub max_messages_per_save: u32 = "10000";
        /// Metadata entries one Save may carry, and entries of a ListCheckpoints metadata
        /// filter; more get RESOURCE_EXHAUSTED.
        #[arg(
            long,
            env = "CHECKPOINTD_MAX_METADATA_ENTRIES",
            value_parser = clap::value_parser!(u32).range(1..)
        )]
        pub max_metadata_entries: u32 = "1000";
        /// Request bytes all calls in flight may hold at once; a call that finds no room within
        /// 5s gets UNAVAILABLE.
        #[arg(long, env = "CHECKPOINTD_MAX_INFLIGHT_REQUEST_BYTES")]
        pub max_inflight_request_bytes: usize = (computed "4 x max-request-bytes");
        /// Request bytes the calls of one tenant may hold at once; a call over it waits on its
        /// own tenant's share, then gets UNAVAILABLE.
        #[arg(long, env = "CHECKPOINTD_MAX_TENANT_REQUEST_BYTES")]
        pub max_tenant_request_bytes: usize = (computed "half the budget");
        /// Request bytes the calls on one connection may hold at once.
        #[arg(long, env = "CHECKPOINTD_MAX_CONNECTION_REQUEST_BYTES")]
        pub max_connection_request_bytes: usize = (computed "max-request-bytes");
        /// Memory the server may use, in bytes (its container's limit): the request and answer
        /// budgets must fit in it, or startup is refused, and the default request budget is
        /// sized to fit. 0 turns the check off.
        #[arg(long, env = "CHECKPOINTD_MEMORY_LIMIT_BYTES")]
        pub memory_limit_bytes: u64 = (computed "the cgroup's memory limit, if any");
        /// How long a request's body may take to arrive once it holds its bytes; a slower one
        /// gets DEADLINE_EXCEEDED (BODY_TIMEOUT) and gives them back.
        #[arg(long, env = "CHECKPOINTD_REQUEST_BODY_TIMEOUT")]
        pub request_body_timeout: Duration = "30s", parsed by parse_duration;
    }
}

/// How long a request waits for room in the budget before it is refused; not a flag.
const BUDGET_WAIT: Duration = Duration::from_secs(5);

/// What one request and all requests together may hold; each is a `serve` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestLimits {
    /// Messages one Save may append.
    pub max_messages_per_save: usize,
    /// Metadata entries one Save may carry.
    pub max_metadata_entries: usize,
    /// Request bytes all calls in flight may hold at once; `None`: four of the largest
    /// requests (see [`RequestLimits::inflight_budget`]).
    pub max_inflight_request_bytes: Option<usize>,
    /// How long a request waits for room in that budget before it is refused.
    pub budget_wait: Duration,
    /// Request bytes the calls of one tenant may hold at once; `None`: half the budget (see
    /// [`RequestLimits::budget_sizes`]).
    pub max_tenant_request_bytes: Option<usize>,
    /// Request bytes the calls on one connection may hold at once; `None`: one largest
    /// request.
    pub max_connection_request_bytes: Option<usize>,
    /// How long a request's body may take to arrive once it holds its bytes (and its prefix
    /// to arrive before that); a slower one is refused and gives its bytes back.
    pub body_timeout: Duration,
    /// The memory the server may use; `None`: the cgroup's limit, if any; `Some(0)`: unchecked.
    pub memory_limit_bytes: Option<u64>,
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self::unchecked(declared_defaults::<LimitArgs>())
    }
}

impl RequestLimits {
    /// These values, checked against `max_request_bytes` (the largest request accepted).
    pub(super) fn from_values(
        values: LimitValues,
        max_request_bytes: usize,
    ) -> Result<Self, String> {
        let limits = Self::unchecked(values);
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

    fn unchecked(values: LimitValues) -> Self {
        // The default body timeout: a largest (16 MiB) request arrives in 30 s at 0.5 MiB/s,
        // far slower than any client in the same cluster or region, and a stalled body holds
        // its tenant's share for no longer than that.
        Self {
            max_messages_per_save: values.max_messages_per_save as usize,
            max_metadata_entries: values.max_metadata_entries as usize,
            max_inflight_request_bytes: values.max_inflight_request_bytes,
            budget_wait: BUDGET_WAIT,
            max_tenant_request_bytes: values.max_tenant_request_bytes,
            max_connection_request_bytes: values.max_connection_request_bytes,
            body_timeout: values.request_body_timeout,
            memory_limit_bytes: values.memory_limit_bytes,
        }
    }
}
