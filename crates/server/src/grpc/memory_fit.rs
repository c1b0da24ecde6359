//! Fits the request and answer budgets into the memory the server may use
//! (`--memory-limit-bytes`, or the container's cgroup limit), so no combination of settings lets
//! admitted requests take more memory than the server has: a budget or cap that cannot fit is
//! refused at startup, naming the setting, and a default request budget is sized down to fit.
//!
//! The arithmetic is the request budget's own: a request costs the budget its wire bytes plus
//! what its counted elements cost decoded ([`super::save_scan`]), and each budget byte is held
//! about [`MEMORY_PER_BUDGET_BYTE`] times over at a request's peak. An answer is held once
//! encoded beside the rows it was built from, so twice its budget bytes.

use crate::config::{RequestLimits, ServerSettings};

use super::save_scan::MEMORY_PER_BUDGET_BYTE;

const MIB: u64 = 1 << 20;
/// What an idle server holds (runtime, pools, caches): 35–45 MiB measured, rounded up.
pub const BASELINE_BYTES: u64 = 64 * MIB;
/// Memory per byte of the answer budget (see the module documentation).
pub const MEMORY_PER_ANSWER_BYTE: u64 = 2;
/// A cgroup limit at or above this is "no limit" (cgroup v1 reports about 2^63).
const UNLIMITED: u64 = 1 << 60;

/// Where the memory bound came from, for the refusal's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Flag(u64),
    Cgroup(u64),
}

impl Bound {
    fn bytes(self) -> u64 {
        match self {
            Self::Flag(bytes) | Self::Cgroup(bytes) => bytes,
        }
    }

    fn source(self) -> &'static str {
        match self {
            Self::Flag(_) => "--memory-limit-bytes",
            Self::Cgroup(_) => {
                "the container's cgroup memory limit; set --memory-limit-bytes to override"
            }
        }
    }
}

/// The memory bound for `limits`: the flag's, else the cgroup's; `None` when there is none or the
/// flag is 0.
pub fn memory_bound(limits: &RequestLimits) -> Option<Bound> {
    match limits.memory_limit_bytes {
        Some(0) => None,
        Some(bytes) => Some(Bound::Flag(bytes)),
        None => cgroup_memory_limit().map(Bound::Cgroup),
    }
}

/// The cgroup v2 `memory.max`, else the cgroup v1 `memory.limit_in_bytes`, when either is a
/// limit.
fn cgroup_memory_limit() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|path| std::fs::read_to_string(path).ok())
    .and_then(|text| text.trim().parse::<u64>().ok())
    .filter(|bytes| *bytes < UNLIMITED)
}

/// `settings.limits`, with a default request budget sized to fit `bound`; an error naming the
/// setting when the caps or a configured budget cannot fit it.
pub fn fit(settings: &ServerSettings, bound: Option<Bound>) -> Result<RequestLimits, String> {
    let mut limits = settings.limits;
    let Some(bound) = bound else {
        return Ok(limits);
    };
    let memory = bound.bytes();
    let mib = |bytes: u64| bytes.div_ceil(MIB);
    let answers =
        (settings.answers.max_inflight_bytes as u64).saturating_mul(MEMORY_PER_ANSWER_BYTE);
    let Some(for_requests) = memory
        .checked_sub(BASELINE_BYTES)
        .and_then(|left| left.checked_sub(answers))
    else {
        return Err(format!(
            "the memory limit of {} MiB ({}) cannot hold the answer budget: \
             --max-inflight-answer-bytes needs {} MiB besides the server's own {} MiB",
            mib(memory),
            bound.source(),
            mib(answers),
            mib(BASELINE_BYTES)
        ));
    };
    let per_byte = MEMORY_PER_BUDGET_BYTE as u64;
    let room = usize::try_from(for_requests / per_byte).unwrap_or(usize::MAX);
    let largest = limits.largest_request_cost(settings.max_request_bytes);
    if largest > room {
        return Err(format!(
            "one request the limits admit can take {} MiB of memory once decoded \
             (--max-request-bytes {}, --max-messages-per-save {}, --max-metadata-entries {}), \
             more than the {} MiB the memory limit of {} MiB ({}) leaves for requests; \
             lower those caps or raise the memory limit",
            mib(largest as u64 * per_byte),
            settings.max_request_bytes,
            limits.max_messages_per_save,
            limits.max_metadata_entries,
            mib(for_requests),
            mib(memory),
            bound.source()
        ));
    }
    match limits.max_inflight_request_bytes {
        Some(budget) if budget > room => Err(format!(
            "--max-inflight-request-bytes {budget} lets requests in flight take {} MiB of \
             memory, more than the {} MiB the memory limit of {} MiB ({}) leaves for them; \
             set it to at most {room}",
            mib(budget as u64 * per_byte),
            mib(for_requests),
            mib(memory),
            bound.source()
        )),
        Some(_) => Ok(limits),
        None => {
            let default = limits.inflight_budget(settings.max_request_bytes);
            if default > room {
                tracing::info!(
                    default,
                    budget = room,
                    memory_limit = memory,
                    "request budget sized down to fit the memory limit"
                );
                limits.max_inflight_request_bytes = Some(room);
            }
            Ok(limits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(messages: usize) -> ServerSettings {
        let mut settings = ServerSettings::default();
        settings.limits.max_messages_per_save = messages;
        settings
    }

    #[test]
    fn the_defaults_fit_the_charts_memory_limit() {
        let limits = fit(&settings(10_000), Some(Bound::Flag(512 * MIB))).unwrap();
        assert_eq!(limits, ServerSettings::default().limits);
    }

    #[test]
    fn caps_whose_one_request_cannot_fit_are_refused_naming_them() {
        let refused = fit(&settings(2_000_000), Some(Bound::Flag(512 * MIB))).unwrap_err();
        assert!(
            refused.contains("--max-messages-per-save 2000000"),
            "{refused}"
        );
        assert!(refused.contains("--memory-limit-bytes"), "{refused}");
    }

    #[test]
    fn a_default_budget_is_sized_down_to_fit_and_a_configured_one_is_refused() {
        let gib = Some(Bound::Cgroup(1 << 30));
        let fitted = fit(&settings(1_000_000), gib).unwrap();
        let budget = fitted.max_inflight_request_bytes.expect("sized down");
        let needed = BASELINE_BYTES
            + budget as u64 * MEMORY_PER_BUDGET_BYTE as u64
            + ServerSettings::default().answers.max_inflight_bytes as u64 * MEMORY_PER_ANSWER_BYTE;
        assert!(needed <= 1 << 30, "{needed}");
        assert!(budget >= fitted.largest_request_cost(16 << 20));

        let mut configured = settings(1_000_000);
        configured.limits.max_inflight_request_bytes = Some(1 << 30);
        let refused = fit(&configured, gib).unwrap_err();
        assert!(
            refused.contains("--max-inflight-request-bytes"),
            "{refused}"
        );
        assert!(refused.contains("cgroup"), "{refused}");
    }

    #[test]
    fn no_bound_and_zero_check_nothing() {
        let mut limits = settings(2_000_000).limits;
        limits.memory_limit_bytes = Some(0);
        assert_eq!(memory_bound(&limits), None);
        assert_eq!(
            fit(&settings(2_000_000), None).unwrap(),
            settings(2_000_000).limits
        );
    }
}
