//! One error type for the whole service, and the one place that maps it to gRPC status codes.

use std::collections::HashMap;
use std::time::Instant;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

mod throttle;

/// The `google.rpc.ErrorInfo` domain of every refusal.
pub const ERROR_DOMAIN: &str = "checkpointd";

/// Everything that can go wrong in checkpointd, classified by what the caller should do.
///
/// Each variant has exactly one gRPC code and one machine-readable reason (see
/// [`Error::reason`]); a situation a client must tell apart gets its own variant.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// Bad input that names no single field.
    #[error("{0}")]
    InvalidArgument(String),
    /// Bad input in one request field, named in the status details.
    #[error("{message}")]
    InvalidField { field: String, message: String },
    /// A client checksum that differs from the server's.
    #[error("{0}")]
    ChecksumMismatch(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    RunNotFound(String),
    #[error("{0}")]
    CheckpointNotFound(String),
    #[error("{0}")]
    TaskNotFound(String),
    /// A conflict with no more precise reason, such as a concurrent write; retry.
    #[error("{0}")]
    Conflict(String),
    /// Different content at a step that already holds a checkpoint.
    #[error("{0}")]
    StepConflict(String),
    /// A label the run already uses for another step.
    #[error("{0}")]
    LabelTaken(String),
    /// A write that the run's state forbids, with no more precise reason.
    #[error("{0}")]
    FailedPrecondition(String),
    /// A continuation names a checkpoint that was rewritten, deleted or rewound since its
    /// first page: the client loads again from the start.
    #[error("{0}")]
    CheckpointChanged(String),
    /// A write under an epoch older than the run's: another writer resumed it.
    #[error("{0}")]
    StaleEpoch(String),
    /// A write under an epoch newer than any Resume handed out.
    #[error("{0}")]
    EpochNotIssued(String),
    /// A new checkpoint at a step below the run's latest.
    #[error("{0}")]
    StepBehindLatest(String),
    /// A Save whose `message_offset` is past the stored log's end: messages the run saved
    /// before are gone (say, acknowledged by a primary that died before its asynchronous
    /// standby was promoted). Not a client bug: the client resyncs with Resume.
    #[error("{0}")]
    MessageLogBehind(String),
    /// A Save whose `tool_count` is past the stored journal's end: the client saw journal
    /// entries the store does not hold (lost in a failover, or never acknowledged). The client
    /// resyncs with Resume.
    #[error("{0}")]
    JournalBehind(String),
    /// An answer the client cannot read, because it did not declare the capability (a
    /// `ClientCapability` value name) that carries it.
    #[error("{message}")]
    CapabilityRequired {
        capability: &'static str,
        message: String,
    },
    /// A task transition from a worker whose lease moved on.
    #[error("{0}")]
    LeaseLost(String),
    /// A task transition the task's state forbids.
    #[error("{0}")]
    TaskState(String),
    /// A journal repair that does not apply to the journal as it is.
    #[error("{0}")]
    JournalState(String),
    #[error("{0}")]
    TooLarge(String),
    /// An answer over the unpaged limit for a client that does not follow continuations.
    #[error("{0}")]
    AnswerTooLarge(String),
    /// No credential, or one that does not verify (unknown, revoked, expired, wrong issuer,
    /// audience or signature); the message never says which, so it teaches an attacker nothing.
    #[error("{0}")]
    Unauthenticated(String),
    /// A valid credential whose role may not make this call (`ROLE_FORBIDDEN`).
    #[error("{0}")]
    RoleForbidden(String),
    /// A valid credential naming a tenant other than its own (`TENANT_MISMATCH`).
    #[error("{0}")]
    TenantMismatch(String),
    /// Stored data failed its checksum.
    #[error("{0}")]
    DataLoss(String),
    /// Every checkpoint of the run failed its checksum.
    #[error("{0}")]
    AllCheckpointsCorrupt(String),
    /// The database cannot be reached; the detail is logged, never sent to clients.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The server has no room for the call right now (its request budget is spent); the caller
    /// may retry. Not logged per call: an overload would flood the log.
    #[error("{0}")]
    Overloaded(String),
    /// A bug or an unexpected driver failure; the detail is logged, never sent to clients.
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Bad input in `field` of the request.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidField {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Names `field` as the request field a bad input came from, keeping the message (which
    /// may say more, such as "metadata key").
    pub fn in_field(self, field: &str) -> Self {
        match self {
            Self::InvalidField { message, .. } => Self::invalid(field, message),
            other => other,
        }
    }

    /// The gRPC code and the `ErrorInfo` reason: the one mapping, documented in the proto.
    pub fn code_and_reason(&self) -> (Code, &'static str) {
        match self {
            Self::InvalidArgument(_) | Self::InvalidField { .. } => {
                (Code::InvalidArgument, "INVALID_ARGUMENT")
            }
            Self::ChecksumMismatch(_) => (Code::InvalidArgument, "CHECKSUM_MISMATCH"),
            Self::NotFound(_) => (Code::NotFound, "NOT_FOUND"),
            Self::RunNotFound(_) => (Code::NotFound, "RUN_NOT_FOUND"),
            Self::CheckpointNotFound(_) => (Code::NotFound, "CHECKPOINT_NOT_FOUND"),
            Self::TaskNotFound(_) => (Code::NotFound, "TASK_NOT_FOUND"),
            Self::Conflict(_) => (Code::AlreadyExists, "CONFLICT"),
            Self::StepConflict(_) => (Code::AlreadyExists, "STEP_CONFLICT"),
            Self::LabelTaken(_) => (Code::AlreadyExists, "LABEL_TAKEN"),
            Self::FailedPrecondition(_) => (Code::FailedPrecondition, "FAILED_PRECONDITION"),
            Self::CheckpointChanged(_) => (Code::FailedPrecondition, "CHECKPOINT_CHANGED"),
            Self::StaleEpoch(_) => (Code::FailedPrecondition, "STALE_EPOCH"),
            Self::EpochNotIssued(_) => (Code::FailedPrecondition, "EPOCH_NOT_ISSUED"),
            Self::StepBehindLatest(_) => (Code::FailedPrecondition, "STEP_BEHIND_LATEST"),
            Self::MessageLogBehind(_) => (Code::FailedPrecondition, "MESSAGE_LOG_BEHIND"),
            Self::JournalBehind(_) => (Code::FailedPrecondition, "JOURNAL_BEHIND"),
            Self::CapabilityRequired { .. } => (Code::FailedPrecondition, "CAPABILITY_REQUIRED"),
            Self::LeaseLost(_) => (Code::FailedPrecondition, "LEASE_LOST"),
            Self::TaskState(_) => (Code::FailedPrecondition, "TASK_STATE"),
            Self::JournalState(_) => (Code::FailedPrecondition, "JOURNAL_STATE"),
            Self::TooLarge(_) => (Code::ResourceExhausted, "TOO_LARGE"),
            Self::AnswerTooLarge(_) => (Code::ResourceExhausted, "ANSWER_TOO_LARGE"),
            Self::Unauthenticated(_) => (Code::Unauthenticated, "CREDENTIAL_INVALID"),
            Self::RoleForbidden(_) => (Code::PermissionDenied, "ROLE_FORBIDDEN"),
            Self::TenantMismatch(_) => (Code::PermissionDenied, "TENANT_MISMATCH"),
            Self::DataLoss(_) => (Code::DataLoss, "CHECKPOINT_CORRUPT"),
            Self::AllCheckpointsCorrupt(_) => (Code::DataLoss, "ALL_CHECKPOINTS_CORRUPT"),
            Self::Unavailable(_) => (Code::Unavailable, "UNAVAILABLE"),
            Self::Overloaded(_) => (Code::Unavailable, "OVERLOADED"),
            Self::Internal(_) => (Code::Internal, "INTERNAL"),
        }
    }

    /// The `ErrorInfo` reason alone.
    pub fn reason(&self) -> &'static str {
        self.code_and_reason().1
    }

    /// Whether this is one of the fencing refusals: the writer lost the run or the task.
    pub fn is_fenced(&self) -> bool {
        matches!(
            self,
            Self::StaleEpoch(_) | Self::EpochNotIssued(_) | Self::LeaseLost(_)
        )
    }
}

/// A status with `code`, `message` and an `ErrorInfo` detail carrying `reason`.
pub fn status_with_reason(
    code: Code,
    message: impl Into<String>,
    reason: &str,
    metadata: HashMap<String, String>,
) -> Status {
    Status::with_error_details(
        code,
        message,
        ErrorDetails::with_error_info(reason, ERROR_DOMAIN, metadata),
    )
}

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        let (code, reason) = error.code_and_reason();
        let mut metadata = HashMap::new();
        let message = match error {
            Error::InvalidField { field, message } => {
                metadata.insert("field".to_owned(), field);
                message
            }
            Error::CapabilityRequired {
                capability,
                message,
            } => {
                metadata.insert("capability".to_owned(), capability.to_owned());
                message
            }
            Error::Unavailable(detail) => {
                if let Some(suppressed) = throttle::admit("unavailable", &detail, Instant::now()) {
                    tracing::warn!(error = %detail, suppressed, "storage unavailable");
                }
                "storage is unavailable; retry later".to_owned()
            }
            Error::Internal(detail) => {
                if let Some(suppressed) = throttle::admit("internal", &detail, Instant::now()) {
                    tracing::error!(error = %detail, suppressed, "internal error");
                }
                "internal error".to_owned()
            }
            other => other.to_string(),
        };
        status_with_reason(code, message, reason, metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_text_never_reaches_the_client() {
        let status = Status::from(Error::Unavailable("connection refused to 10.0.0.1".into()));
        assert_eq!(status.code(), Code::Unavailable);
        assert!(!status.message().contains("10.0.0.1"));
        let status = Status::from(Error::Internal("relation \"x\" does not exist".into()));
        assert_eq!(status.code(), Code::Internal);
        assert!(!status.message().contains("relation"));
    }

    #[test]
    fn every_status_carries_its_reason_and_a_field_when_known() {
        let status = Status::from(Error::StaleEpoch("stale epoch 1".into()));
        assert_eq!(status.code(), Code::FailedPrecondition);
        let info = status.get_details_error_info().expect("error info");
        assert_eq!(
            (info.reason.as_str(), info.domain.as_str()),
            ("STALE_EPOCH", "checkpointd")
        );
        let status = Status::from(Error::invalid("checksum", "upper-case hex"));
        assert_eq!(status.code(), Code::InvalidArgument);
        let info = status.get_details_error_info().expect("error info");
        assert_eq!(info.reason, "INVALID_ARGUMENT");
        assert_eq!(
            info.metadata.get("field").map(String::as_str),
            Some("checksum")
        );
        let status = Status::from(Error::Unavailable("10.0.0.1 refused".into()));
        assert_eq!(
            status.get_details_error_info().unwrap().reason,
            "UNAVAILABLE"
        );
        let status = Status::from(Error::CapabilityRequired {
            capability: "CLIENT_CAPABILITY_IN_DOUBT_CALLS",
            message: "calls in doubt".into(),
        });
        assert_eq!(status.code(), Code::FailedPrecondition);
        let info = status.get_details_error_info().expect("error info");
        assert_eq!(info.reason, "CAPABILITY_REQUIRED");
        assert_eq!(
            info.metadata.get("capability").map(String::as_str),
            Some("CLIENT_CAPABILITY_IN_DOUBT_CALLS")
        );
    }
}
