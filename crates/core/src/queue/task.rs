//! Task records and the transitions a task can go through.

use std::fmt;
use std::time::{Duration, SystemTime};

use crate::domain::{Attempt, RunId};
use crate::error::{Error, Result};

/// A task id: a time-ordered UUID, so ids sort by creation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(String);

impl TaskId {
    pub fn generate() -> Self {
        Self(uuid::Uuid::now_v7().to_string())
    }

    pub fn parse(raw: &str) -> Result<Self> {
        uuid::Uuid::parse_str(raw)
            .map(|id| Self(id.to_string()))
            .map_err(|_| Error::invalid("task_id", format!("task_id {raw:?} is not a task id")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskState {
    Pending,
    Running,
    Completed,
    Failed,
    InputRequired,
    Dead,
    Cancelled,
}

impl TaskState {
    pub const ALL: [TaskState; 7] = [
        Self::Pending,
        Self::Running,
        Self::Completed,
        Self::Failed,
        Self::InputRequired,
        Self::Dead,
        Self::Cancelled,
    ];

    /// The name stored in databases and shown to operators.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::InputRequired => "input_required",
            Self::Dead => "dead",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(raw: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|state| state.as_str() == raw)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown task state {raw:?}")))
    }

    /// Completed, failed and cancelled tasks are finished: only Requeue (of failed or dead
    /// tasks) moves a task out of them.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ErrorClass {
    #[default]
    Transient,
    Fatal,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transient => "transient",
            Self::Fatal => "fatal",
        }
    }

    pub fn parse(raw: &str) -> Self {
        if raw == "fatal" {
            Self::Fatal
        } else {
            Self::Transient
        }
    }
}

/// The longest retry delay a policy may ask for.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30 * 86_400);

/// How failed attempts are retried; stored on each task.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub initial_delay: Duration,
    pub multiplier: f64,
    pub max_delay: Duration,
    /// Random spread as a fraction of the delay, in [0, 1].
    pub jitter: f64,
    /// Total runs allowed, the first included.
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial_delay: Duration::from_secs(1),
            multiplier: 2.0,
            max_delay: Duration::from_secs(300),
            jitter: 0.2,
            max_attempts: 5,
        }
    }
}

impl RetryPolicy {
    pub fn validate(&self) -> Result<()> {
        if !(self.multiplier >= 1.0 && self.multiplier.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "retry multiplier must be >= 1, got {}",
                self.multiplier
            )));
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return Err(Error::InvalidArgument(format!(
                "retry jitter must be within [0, 1], got {}",
                self.jitter
            )));
        }
        if self.max_attempts == 0 {
            return Err(Error::InvalidArgument("max_attempts must be >= 1".into()));
        }
        if self.max_delay > MAX_RETRY_DELAY {
            return Err(Error::InvalidArgument(format!(
                "max_delay must be at most {} days",
                MAX_RETRY_DELAY.as_secs() / 86_400
            )));
        }
        if self.max_delay < self.initial_delay {
            return Err(Error::InvalidArgument(
                "max_delay must not be below initial_delay".into(),
            ));
        }
        Ok(())
    }
}

/// A human decision point.
#[derive(Clone, Debug, PartialEq)]
pub struct Approval {
    pub action: String,
    pub details: Vec<u8>,
    pub requested_at: SystemTime,
    /// `Some(approved)` once decided.
    pub decision: Option<bool>,
    pub decided_by: String,
    pub decided_at: Option<SystemTime>,
    pub comment: String,
}

/// A validated Enqueue.
#[derive(Clone, Debug)]
pub struct NewTask {
    pub run_id: RunId,
    pub input: Vec<u8>,
    pub idempotency_key: Option<String>,
    pub retry_policy: RetryPolicy,
    /// Whether an approval decision makes the task claimable at once, or leaves it parked
    /// until [`Transition::ResumeTask`]; resolved against the server's default by then.
    pub auto_resume_hitl: bool,
}

/// One task as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub id: TaskId,
    pub run_id: RunId,
    pub input: Vec<u8>,
    pub state: TaskState,
    /// Claims so far; the fencing token of the current lease.
    pub attempt: Attempt,
    /// Runs charged against the retry policy.
    pub attempts_used: u32,
    pub retry_policy: RetryPolicy,
    pub idempotency_key: Option<String>,
    /// Fixed at enqueue: see [`NewTask::auto_resume_hitl`].
    pub auto_resume_hitl: bool,
    pub worker_id: Option<String>,
    pub lease_expires_at: Option<SystemTime>,
    pub next_attempt_at: SystemTime,
    pub last_error: Option<String>,
    pub last_error_class: Option<ErrorClass>,
    pub approval: Option<Approval>,
    pub result: Option<Vec<u8>>,
    pub created_at: SystemTime,
    pub updated_at: SystemTime,
}

impl Task {
    pub fn new(task: NewTask, now: SystemTime) -> Self {
        Self {
            id: TaskId::generate(),
            run_id: task.run_id,
            input: task.input,
            state: TaskState::Pending,
            attempt: Attempt::NEVER_CLAIMED,
            attempts_used: 0,
            retry_policy: task.retry_policy,
            idempotency_key: task.idempotency_key,
            auto_resume_hitl: task.auto_resume_hitl,
            worker_id: None,
            lease_expires_at: None,
            next_attempt_at: now,
            last_error: None,
            last_error_class: None,
            approval: None,
            result: None,
            created_at: now,
            updated_at: now,
        }
    }
}

/// A change requested of one task after its claim (or by an operator).
#[derive(Clone, Debug)]
pub enum Transition {
    Heartbeat {
        attempt: Attempt,
        lease: Duration,
    },
    Complete {
        attempt: Attempt,
        result: Vec<u8>,
    },
    Fail {
        attempt: Attempt,
        error: String,
        class: ErrorClass,
    },
    Release {
        attempt: Attempt,
    },
    RequestApproval {
        attempt: Attempt,
        action: String,
        details: Vec<u8>,
    },
    Decide {
        approved: bool,
        decided_by: String,
        comment: String,
    },
    /// An operator lets a task that a decision left parked run again.
    ResumeTask,
    Cancel,
    Requeue,
}
