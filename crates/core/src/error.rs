//! One error type for the whole service, classified by what the caller should do, with no
//! transport in it: the server's gRPC adapters map each [`ErrorCode`] and reason to a status.
//!
//! - [`missing`]: what a not-found error names, with the wording clients read.
//! - [`failure`]: the source a driver or internal failure keeps, and its detail for logs.

pub mod failure;
pub mod missing;

use std::error::Error as StdError;

pub use failure::Source;
pub use missing::Missing;

/// What kind of failure an [`Error`] is, in the caller's terms. A closed set, so every layer
/// below the transport can classify a failure without knowing gRPC; the server maps each to
/// the gRPC code of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidArgument,
    NotFound,
    AlreadyExists,
    FailedPrecondition,
    ResourceExhausted,
    Unauthenticated,
    PermissionDenied,
    DataLoss,
    Unavailable,
    Internal,
}

/// Everything that can go wrong in checkpointd, classified by what the caller should do.
///
/// Each variant has exactly one code and one machine-readable reason (see
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
    /// A run, checkpoint or task the call named that does not exist.
    #[error("{0}")]
    NotFound(Missing),
    /// A conflict with no more precise reason, such as a concurrent write; retry.
    #[error("{0}")]
    Conflict(String),
    /// Different content at a step that already holds a checkpoint.
    #[error("{0}")]
    StepConflict(String),
    /// A label the run already uses for another step.
    #[error("{0}")]
    LabelTaken(String),
    /// A call id journalled with other arguments (another non-empty digest) than the call
    /// being recorded: a replay must match its call.
    #[error(
        "call {call_id} is journalled with arguments digest {stored_digest}, not \
         {request_digest}: a different call reuses its id"
    )]
    ArgumentsMismatch {
        call_id: String,
        stored_digest: String,
        request_digest: String,
    },
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
    /// The database cannot be reached; the context and the driver's error are logged, never
    /// sent to clients.
    #[error("storage unavailable: {context}")]
    Unavailable {
        context: String,
        source: Option<Source>,
    },
    /// The server has no room for the call right now (its request budget is spent); the caller
    /// may retry. Not logged per call: an overload would flood the log.
    #[error("{0}")]
    Overloaded(String),
    /// A bug or an unexpected driver failure; the context and the driver's error are logged,
    /// never sent to clients.
    #[error("internal error: {context}")]
    Internal {
        context: String,
        source: Option<Source>,
    },
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

    /// The database cannot serve the call, for a reason of ours with no error under it.
    pub fn unavailable(context: impl Into<String>) -> Self {
        Self::Unavailable {
            context: context.into(),
            source: None,
        }
    }

    /// The database cannot serve the call: `source` is the driver's error, `context` what we
    /// were doing.
    pub fn unavailable_from(
        context: impl Into<String>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self::Unavailable {
            context: context.into(),
            source: Some(std::sync::Arc::new(source)),
        }
    }

    /// A bug: something that cannot happen did, with no error under it.
    pub fn internal(context: impl Into<String>) -> Self {
        Self::Internal {
            context: context.into(),
            source: None,
        }
    }

    /// An unexpected failure of a driver or the system: `source` is its error, `context` what
    /// we were doing.
    pub fn internal_from(
        context: impl Into<String>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self::Internal {
            context: context.into(),
            source: Some(std::sync::Arc::new(source)),
        }
    }

    /// No run `run_id` in the tenant.
    pub fn run_not_found(run_id: impl ToString) -> Self {
        Self::NotFound(Missing::Run {
            run_id: run_id.to_string(),
        })
    }

    /// No checkpoint at `step` of run `run_id`.
    pub fn checkpoint_not_found(run_id: impl ToString, step: u64) -> Self {
        Self::NotFound(Missing::CheckpointAt {
            run_id: run_id.to_string(),
            step,
        })
    }

    /// No checkpoint at all in run `run_id`.
    pub fn no_checkpoints(run_id: impl ToString) -> Self {
        Self::NotFound(Missing::Checkpoints {
            run_id: run_id.to_string(),
        })
    }

    /// No task `task_id` in the tenant.
    pub fn task_not_found(task_id: impl ToString) -> Self {
        Self::NotFound(Missing::Task {
            task_id: task_id.to_string(),
        })
    }

    /// Names `field` as the request field a bad input came from, keeping the message (which
    /// may say more, such as "metadata key").
    pub fn in_field(self, field: &str) -> Self {
        match self {
            Self::InvalidField { message, .. } => Self::invalid(field, message),
            other => other,
        }
    }

    /// The code and the machine-readable reason (gRPC's `ErrorInfo` reason): the one mapping,
    /// documented in the proto.
    pub fn code_and_reason(&self) -> (ErrorCode, &'static str) {
        match self {
            Self::InvalidArgument(_) | Self::InvalidField { .. } => {
                (ErrorCode::InvalidArgument, "INVALID_ARGUMENT")
            }
            Self::ChecksumMismatch(_) => (ErrorCode::InvalidArgument, "CHECKSUM_MISMATCH"),
            Self::NotFound(missing) => (ErrorCode::NotFound, missing.reason()),
            Self::Conflict(_) => (ErrorCode::AlreadyExists, "CONFLICT"),
            Self::StepConflict(_) => (ErrorCode::AlreadyExists, "STEP_CONFLICT"),
            Self::LabelTaken(_) => (ErrorCode::AlreadyExists, "LABEL_TAKEN"),
            Self::ArgumentsMismatch { .. } => (ErrorCode::AlreadyExists, "ARGUMENTS_MISMATCH"),
            Self::FailedPrecondition(_) => (ErrorCode::FailedPrecondition, "FAILED_PRECONDITION"),
            Self::CheckpointChanged(_) => (ErrorCode::FailedPrecondition, "CHECKPOINT_CHANGED"),
            Self::StaleEpoch(_) => (ErrorCode::FailedPrecondition, "STALE_EPOCH"),
            Self::EpochNotIssued(_) => (ErrorCode::FailedPrecondition, "EPOCH_NOT_ISSUED"),
            Self::StepBehindLatest(_) => (ErrorCode::FailedPrecondition, "STEP_BEHIND_LATEST"),
            Self::MessageLogBehind(_) => (ErrorCode::FailedPrecondition, "MESSAGE_LOG_BEHIND"),
            Self::JournalBehind(_) => (ErrorCode::FailedPrecondition, "JOURNAL_BEHIND"),
            Self::CapabilityRequired { .. } => {
                (ErrorCode::FailedPrecondition, "CAPABILITY_REQUIRED")
            }
            Self::LeaseLost(_) => (ErrorCode::FailedPrecondition, "LEASE_LOST"),
            Self::TaskState(_) => (ErrorCode::FailedPrecondition, "TASK_STATE"),
            Self::JournalState(_) => (ErrorCode::FailedPrecondition, "JOURNAL_STATE"),
            Self::TooLarge(_) => (ErrorCode::ResourceExhausted, "TOO_LARGE"),
            Self::AnswerTooLarge(_) => (ErrorCode::ResourceExhausted, "ANSWER_TOO_LARGE"),
            Self::Unauthenticated(_) => (ErrorCode::Unauthenticated, "CREDENTIAL_INVALID"),
            Self::RoleForbidden(_) => (ErrorCode::PermissionDenied, "ROLE_FORBIDDEN"),
            Self::TenantMismatch(_) => (ErrorCode::PermissionDenied, "TENANT_MISMATCH"),
            Self::DataLoss(_) => (ErrorCode::DataLoss, "CHECKPOINT_CORRUPT"),
            Self::AllCheckpointsCorrupt(_) => (ErrorCode::DataLoss, "ALL_CHECKPOINTS_CORRUPT"),
            Self::Unavailable { .. } => (ErrorCode::Unavailable, "UNAVAILABLE"),
            Self::Overloaded(_) => (ErrorCode::Unavailable, "OVERLOADED"),
            Self::Internal { .. } => (ErrorCode::Internal, "INTERNAL"),
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
