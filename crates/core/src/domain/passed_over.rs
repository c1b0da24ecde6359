//! The quarantined checkpoints a load or Resume passed over on its way to an older one: what
//! every answer reports until an operator repairs the run (DESIGN contract 13).

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::{CheckpointSummary, Step};

/// One quarantined checkpoint above the one an answer restored. Its fields other than `step`
/// come from a checkpoint that failed verification: they tell people what was skipped and are
/// never restored from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassedOver {
    pub step: Step,
    pub checkpoint_id: String,
    pub label: Option<String>,
    pub metadata: BTreeMap<String, String>,
    /// `None` for checkpoints quarantined before the server kept the time.
    pub quarantined_at: Option<SystemTime>,
    pub reason: String,
}

impl PassedOver {
    /// The summary's checkpoint, when it is quarantined; `None` for a valid one.
    pub fn of(summary: CheckpointSummary) -> Option<Self> {
        let quarantine = summary.quarantine?;
        Some(Self {
            step: summary.step,
            checkpoint_id: summary.id,
            label: summary.label,
            metadata: summary.metadata,
            quarantined_at: quarantine.quarantined_at,
            reason: quarantine.reason,
        })
    }

    /// The steps of `passed_over`, in its order.
    pub fn steps(passed_over: &[Self]) -> Vec<Step> {
        passed_over
            .iter()
            .map(|checkpoint| checkpoint.step)
            .collect()
    }
}
