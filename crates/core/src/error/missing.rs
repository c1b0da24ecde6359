//! What a not-found error names, and the one wording clients read for each kind.
//!
//! The ids are held as text: the id types live in `domain` and `queue`, which build on this
//! module, and a message only ever shows them.

use std::fmt;

/// The thing a call named that does not exist. Each kind has one wording (clients and tests
/// read some of them) and one `ErrorInfo` reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// A run the tenant does not have.
    Run { run_id: String },
    /// A run that a Resume with `require_existing` named: such a Resume starts no new run.
    RunToResume { run_id: String },
    /// Any checkpoint, in a run that has none.
    Checkpoints { run_id: String },
    /// The checkpoint at one step.
    CheckpointAt { run_id: String, step: u64 },
    /// The checkpoint carrying a label.
    CheckpointLabelled { run_id: String, label: String },
    /// A task the tenant does not have.
    Task { task_id: String },
    /// A webhook endpoint the tenant does not have.
    WebhookEndpoint { endpoint_id: String },
}

impl Missing {
    /// The `ErrorInfo` reason: one per kind of thing.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Run { .. } | Self::RunToResume { .. } => "RUN_NOT_FOUND",
            Self::Checkpoints { .. }
            | Self::CheckpointAt { .. }
            | Self::CheckpointLabelled { .. } => "CHECKPOINT_NOT_FOUND",
            Self::Task { .. } => "TASK_NOT_FOUND",
            Self::WebhookEndpoint { .. } => "WEBHOOK_ENDPOINT_NOT_FOUND",
        }
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Run { run_id } => write!(f, "run {run_id} not found"),
            Self::RunToResume { run_id } => write!(
                f,
                "run {run_id} not found; Resume with require_existing starts no new run"
            ),
            Self::Checkpoints { run_id } => write!(f, "run {run_id} has no checkpoints"),
            Self::CheckpointAt { run_id, step } => {
                write!(f, "run {run_id} has no checkpoint at step {step}")
            }
            Self::CheckpointLabelled { run_id, label } => {
                write!(f, "run {run_id} has no checkpoint labelled {label:?}")
            }
            Self::Task { task_id } => write!(f, "task {task_id} not found"),
            Self::WebhookEndpoint { endpoint_id } => {
                write!(f, "webhook endpoint {endpoint_id} not found")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_keeps_the_wording_clients_read() {
        let run_id = "r1".to_owned();
        let cases = [
            (
                Missing::Run {
                    run_id: run_id.clone(),
                },
                "run r1 not found",
            ),
            (
                Missing::RunToResume {
                    run_id: run_id.clone(),
                },
                "run r1 not found; Resume with require_existing starts no new run",
            ),
            (
                Missing::Checkpoints {
                    run_id: run_id.clone(),
                },
                "run r1 has no checkpoints",
            ),
            (
                Missing::CheckpointAt {
                    run_id: run_id.clone(),
                    step: 3,
                },
                "run r1 has no checkpoint at step 3",
            ),
            (
                Missing::CheckpointLabelled {
                    run_id,
                    label: "plan".into(),
                },
                "run r1 has no checkpoint labelled \"plan\"",
            ),
            (
                Missing::Task {
                    task_id: "t1".into(),
                },
                "task t1 not found",
            ),
        ];
        for (missing, wording) in cases {
            assert_eq!(missing.to_string(), wording);
        }
    }
}
