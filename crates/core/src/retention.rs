//! The rules of retention as pure functions, shared by every backend: which checkpoints a
//! policy lets go, and which are protected whatever the policy says.
//!
//! Backends only fetch the facts (the storage crate's `RetentionFacts`) and delete what the
//! pruner asks, so every store keeps exactly the same checkpoints.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use crate::domain::{Step, ToolRecord};
use crate::error::{Error, Result};

/// The pin source of an operator's `PinCheckpoint`.
pub const OPERATOR_PIN: &str = "operator";

/// The pin source of a task waiting for approval: one per task, so two approvals on one run
/// come and go independently of each other and of the operator's pins.
pub fn approval_pin(task_id: &str) -> String {
    format!("approval:{task_id}")
}

/// How many of a run's checkpoints are kept; the server default applies to runs that set none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetentionPolicy {
    /// Keep every checkpoint.
    All,
    /// Keep only the latest valid checkpoint (plus the protected ones).
    LatestOnly,
    /// Keep the N most recent valid checkpoints (plus the protected ones).
    KeepLast(u32),
    /// Keep checkpoints younger than this (plus the protected ones).
    MaxAge(Duration),
}

impl FromStr for RetentionPolicy {
    type Err = Error;

    /// Parses `all`, `latest_only`, `keep_last:N` (N >= 1) or `max_age:DURATION` (e.g. `7d`).
    fn from_str(raw: &str) -> Result<Self> {
        let invalid = |why: &str| {
            Error::InvalidArgument(format!(
                "invalid retention policy {raw:?}: {why}; use all, latest_only, keep_last:N or \
                 max_age:DURATION"
            ))
        };
        match raw.split_once(':') {
            None if raw == "all" => Ok(Self::All),
            None if raw == "latest_only" => Ok(Self::LatestOnly),
            Some(("keep_last", n)) => match n.parse::<u32>() {
                Ok(0) | Err(_) => Err(invalid("N must be a whole number of at least 1")),
                Ok(n) => Ok(Self::KeepLast(n)),
            },
            Some(("max_age", age)) => match humantime::parse_duration(age) {
                Ok(age) if !age.is_zero() => Ok(Self::MaxAge(age)),
                _ => Err(invalid("DURATION must be positive, like 36h or 7d")),
            },
            _ => Err(invalid("unknown policy")),
        }
    }
}

impl fmt::Display for RetentionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => f.write_str("all"),
            Self::LatestOnly => f.write_str("latest_only"),
            Self::KeepLast(n) => write!(f, "keep_last:{n}"),
            Self::MaxAge(age) => write!(f, "max_age:{}", humantime::format_duration(*age)),
        }
    }
}

/// What retention needs to know about one stored checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointFacts {
    pub step: Step,
    pub created_at: SystemTime,
    pub quarantined: bool,
    /// The sources pinning it (`operator`, `approval:TASK`), sorted; empty when unpinned.
    pub pinned_by: Vec<String>,
}

impl CheckpointFacts {
    /// Pinned by any source (an operator, an approval wait).
    pub fn pinned(&self) -> bool {
        !self.pinned_by.is_empty()
    }
}

/// The checkpoints no policy may prune, found by the pruner before it plans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protected {
    /// The newest checkpoint that verifies (checksum checked, not merely "not quarantined").
    /// Nothing at or above it is pruned: it is what Resume restores, and the quarantined ones
    /// above it are what Resume reports as skipped.
    pub latest_valid: Step,
    /// The checkpoint the journal's tail depends on: see [`journal_base`].
    pub journal_base: Option<Step>,
}

/// The checkpoint that the tool results journalled after the latest valid checkpoint depend on.
///
/// Results with `seq > latest_tool_count` are not covered by the latest valid checkpoint
/// (recorded after it was saved, or left out by its Save's `tool_count`); Resume returns them and the agent replays them while it re-executes the steps after
/// the checkpoint it restores. A result recorded for step `t` is replayed on top of the newest
/// checkpoint before `t`, so that checkpoint stays. Normally it is the latest valid one itself;
/// it differs only when a result was journalled for an earlier step than the latest checkpoint.
pub fn journal_base(
    tools: &[ToolRecord],
    latest_tool_count: u64,
    checkpoints: &[CheckpointFacts],
) -> Option<Step> {
    let earliest = tools
        .iter()
        .filter(|record| record.seq > latest_tool_count)
        .map(|record| record.step)
        .min()?;
    checkpoints
        .iter()
        .rev()
        .find(|facts| !facts.quarantined && facts.step < earliest)
        .map(|facts| facts.step)
}

/// The steps a policy lets go, ascending. `checkpoints` is the run's whole list, ascending.
///
/// Never returned: the latest valid checkpoint and anything above it, pinned checkpoints, the
/// journal base. Quarantined checkpoints below the latest valid one count as old checkpoints
/// (they are never restored) but never towards `keep_last`.
pub fn prunable(
    policy: RetentionPolicy,
    checkpoints: &[CheckpointFacts],
    protected: Protected,
    now: SystemTime,
) -> Vec<Step> {
    let below_latest = checkpoints
        .iter()
        .filter(|facts| facts.step < protected.latest_valid);
    let candidates: Vec<&CheckpointFacts> = match policy {
        RetentionPolicy::All => Vec::new(),
        RetentionPolicy::LatestOnly => below_latest.collect(),
        RetentionPolicy::KeepLast(n) => {
            // The latest valid checkpoint is the first of the N kept.
            let keep_below = n.saturating_sub(1) as usize;
            let mut kept = 0;
            let mut candidates: Vec<&CheckpointFacts> = below_latest
                .rev()
                .filter(|facts| {
                    if !facts.quarantined && kept < keep_below {
                        kept += 1;
                        return false;
                    }
                    true
                })
                .collect();
            candidates.reverse();
            candidates
        }
        RetentionPolicy::MaxAge(age) => {
            let cutoff = now.checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH);
            below_latest
                .filter(|facts| facts.created_at < cutoff)
                .collect()
        }
    };
    candidates
        .into_iter()
        .filter(|facts| !facts.pinned() && Some(facts.step) != protected.journal_base)
        .map(|facts| facts.step)
        .collect()
}

#[cfg(test)]
mod tests;
