//! Conversions between task wire messages and queue records.

use std::time::Duration;

use crate::proto;
use crate::service::RetryOverrides;
use crate::wire::timestamp;
use checkpointd_core::error::{Error, Result};
use checkpointd_storage::queue::{Approval, ErrorClass, RetryPolicy, Task, TaskState};

pub fn state_to_wire(state: TaskState) -> proto::TaskState {
    match state {
        TaskState::Pending => proto::TaskState::Pending,
        TaskState::Running => proto::TaskState::Running,
        TaskState::Completed => proto::TaskState::Completed,
        TaskState::Failed => proto::TaskState::Failed,
        TaskState::InputRequired => proto::TaskState::InputRequired,
        TaskState::Dead => proto::TaskState::Dead,
        TaskState::Cancelled => proto::TaskState::Cancelled,
    }
}

/// `None` for TASK_STATE_UNSPECIFIED (no filter).
pub fn state_from_wire(raw: i32) -> Result<Option<TaskState>> {
    let state = proto::TaskState::try_from(raw)
        .map_err(|_| Error::InvalidArgument(format!("unknown task state {raw}")))?;
    Ok(match state {
        proto::TaskState::Unspecified => None,
        proto::TaskState::Pending => Some(TaskState::Pending),
        proto::TaskState::Running => Some(TaskState::Running),
        proto::TaskState::Completed => Some(TaskState::Completed),
        proto::TaskState::Failed => Some(TaskState::Failed),
        proto::TaskState::InputRequired => Some(TaskState::InputRequired),
        proto::TaskState::Dead => Some(TaskState::Dead),
        proto::TaskState::Cancelled => Some(TaskState::Cancelled),
    })
}

pub fn error_class_from_wire(raw: i32) -> Result<ErrorClass> {
    match proto::ErrorClass::try_from(raw) {
        Ok(proto::ErrorClass::Fatal) => Ok(ErrorClass::Fatal),
        Ok(proto::ErrorClass::Transient | proto::ErrorClass::Unspecified) => {
            Ok(ErrorClass::Transient)
        }
        Err(_) => Err(Error::InvalidArgument(format!("unknown error class {raw}"))),
    }
}

fn error_class_to_wire(class: ErrorClass) -> proto::ErrorClass {
    match class {
        ErrorClass::Transient => proto::ErrorClass::Transient,
        ErrorClass::Fatal => proto::ErrorClass::Fatal,
    }
}

/// A decision's comment, refused with the field's name when it holds a NUL byte or is
/// overlong, on every backend alike.
pub fn comment_from_wire(raw: String) -> Result<String> {
    checkpointd_core::domain::check_text("comment", &raw)?;
    Ok(raw)
}

/// A failure's error text: a NUL byte is refused; length is not, the queue's rules keep the
/// first 8 KiB.
pub fn error_text_from_wire(raw: String) -> Result<String> {
    checkpointd_core::domain::check_no_nul("error", &raw)?;
    Ok(raw)
}

/// The longest lease a claim or heartbeat may ask for.
pub const MAX_LEASE: Duration = Duration::from_secs(24 * 3600);

/// A lease duration: positive and at most [`MAX_LEASE`].
pub fn positive_duration(field: &str, raw: Option<prost_types::Duration>) -> Result<Duration> {
    let raw = raw.ok_or_else(|| Error::InvalidArgument(format!("{field} is required")))?;
    match Duration::try_from(raw) {
        Ok(duration) if duration > MAX_LEASE => Err(Error::InvalidArgument(format!(
            "{field} must be at most {}h",
            MAX_LEASE.as_secs() / 3600
        ))),
        Ok(duration) if !duration.is_zero() => Ok(duration),
        _ => Err(Error::InvalidArgument(format!(
            "{field} must be positive, got {}s {}ns",
            raw.seconds, raw.nanos
        ))),
    }
}

fn duration_to_wire(duration: Duration) -> prost_types::Duration {
    prost_types::Duration::try_from(duration).unwrap_or(prost_types::Duration {
        seconds: i64::MAX,
        nanos: 0,
    })
}

/// The fields a wire policy sets; zero, like absence, leaves a field to the server default.
pub fn retry_overrides_from_wire(
    raw: Option<proto::RetryPolicy>,
) -> Result<Option<RetryOverrides>> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let duration = |field: &str, value: Option<prost_types::Duration>| {
        value
            .map(|value| {
                Duration::try_from(value)
                    .map_err(|_| Error::InvalidArgument(format!("{field} must not be negative")))
            })
            .transpose()
    };
    Ok(Some(RetryOverrides {
        initial_delay: duration("initial_delay", raw.initial_delay)?,
        multiplier: (raw.multiplier != 0.0).then_some(raw.multiplier),
        max_delay: duration("max_delay", raw.max_delay)?,
        jitter: raw.jitter,
        max_attempts: (raw.max_attempts != 0).then_some(raw.max_attempts),
    }))
}

fn policy_to_wire(policy: &RetryPolicy) -> proto::RetryPolicy {
    proto::RetryPolicy {
        initial_delay: Some(duration_to_wire(policy.initial_delay)),
        multiplier: policy.multiplier,
        max_delay: Some(duration_to_wire(policy.max_delay)),
        jitter: Some(policy.jitter),
        max_attempts: policy.max_attempts,
    }
}

fn approval_to_wire(approval: Approval) -> proto::Approval {
    proto::Approval {
        action: approval.action,
        details: approval.details,
        requested_at: Some(timestamp(approval.requested_at)),
        decided: approval.decision.is_some(),
        approved: approval.decision.unwrap_or(false),
        decided_by: approval.decided_by,
        decided_at: approval.decided_at.map(timestamp),
        comment: approval.comment,
    }
}

pub fn task_to_wire(task: Task) -> proto::Task {
    proto::Task {
        task_id: task.id.as_str().to_owned(),
        run_id: task.run_id.as_str().to_owned(),
        input: task.input,
        state: state_to_wire(task.state) as i32,
        attempt: task.attempt.get(),
        attempts_used: task.attempts_used,
        retry_policy: Some(policy_to_wire(&task.retry_policy)),
        idempotency_key: task.idempotency_key.unwrap_or_default(),
        auto_resume_hitl: task.auto_resume_hitl,
        worker_id: task.worker_id.unwrap_or_default(),
        lease_expires_at: task.lease_expires_at.map(timestamp),
        next_attempt_at: Some(timestamp(task.next_attempt_at)),
        last_error: task.last_error.unwrap_or_default(),
        last_error_class: task
            .last_error_class
            .map_or(proto::ErrorClass::Unspecified, error_class_to_wire)
            as i32,
        approval: task.approval.map(approval_to_wire),
        result: task.result.unwrap_or_default(),
        created_at: Some(timestamp(task.created_at)),
        updated_at: Some(timestamp(task.updated_at)),
    }
}
