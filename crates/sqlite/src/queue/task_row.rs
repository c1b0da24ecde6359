//! Conversions between a [`Task`] and its row in the `tasks` table.
//!
//! Unlike checkpoint payloads, nothing here is covered by a checksum that would catch a damaged
//! value later, so a value we could not have written (an unknown state, a negative counter, an
//! id that is not a UUID) fails the read as `Internal` instead of being read leniently.
//!
//! Timestamps are stored in microseconds and delays in milliseconds, which is coarser than
//! `SystemTime` and `Duration`; the queue therefore returns rows as written (`RETURNING`), so
//! what a call returns is exactly what a later read returns.

use std::time::{Duration, SystemTime};

use rusqlite::Row;
use rusqlite::types::{ToSqlOutput, Type, Value, ValueRef};

use crate::codec::{self, from_micros, to_micros};
use checkpointd_core::domain::{Attempt, RunId, Tenant};
use checkpointd_core::error::Result;
use checkpointd_storage::queue::{Approval, ErrorClass, RetryPolicy, Task, TaskId, TaskState};

/// The columns a transition may change; [`update_params`] binds one `:name` per column.
macro_rules! task_mutable_assignments {
    () => {
        "state = :state, attempt = :attempt, attempts_used = :attempts_used, \
         worker_id = :worker_id, lease_expires_at = :lease_expires_at, \
         next_attempt_at = :next_attempt_at, last_error = :last_error, \
         last_error_class = :last_error_class, approval_action = :approval_action, \
         approval_requested_at = :approval_requested_at, \
         approval_decision = :approval_decision, approval_decided_by = :approval_decided_by, \
         approval_decided_at = :approval_decided_at, approval_comment = :approval_comment, \
         updated_at = :updated_at, approval_details = :approval_details, result = :result"
    };
}
pub(super) use task_mutable_assignments;

/// A named SQL parameter with its value, borrowed from the task where possible (inputs and
/// results can be large).
pub(super) type Param<'a> = (&'static str, ToSqlOutput<'a>);

/// Every column of a new row, as `:column` parameters.
pub(super) fn insert_params<'a>(tenant: &'a Tenant, task: &'a Task) -> Result<Vec<Param<'a>>> {
    let policy = &task.retry_policy;
    let mut params = vec![
        (":tenant", text(tenant.as_str())),
        (":id", text(task.id.as_str())),
        (":run_id", text(task.run_id.as_str())),
        (":initial_delay_ms", int(millis(policy.initial_delay))),
        (
            ":multiplier",
            ToSqlOutput::Owned(Value::Real(policy.multiplier)),
        ),
        (":max_delay_ms", int(millis(policy.max_delay))),
        (":jitter", ToSqlOutput::Owned(Value::Real(policy.jitter))),
        (":max_attempts", int(policy.max_attempts.into())),
        (
            ":idempotency_key",
            optional(task.idempotency_key.as_deref(), text),
        ),
        (":created_at", time(task.created_at)),
        (":input", blob(&task.input)),
        (":auto_resume_hitl", int(task.auto_resume_hitl.into())),
    ];
    params.extend(mutable_params(task)?);
    Ok(params)
}

/// The key, the changeable columns and `:fence`, the attempt the row must still be at.
pub(super) fn update_params<'a>(
    tenant: &'a Tenant,
    task: &'a Task,
    fence: u64,
) -> Result<Vec<Param<'a>>> {
    let mut params = vec![
        (":tenant", text(tenant.as_str())),
        (":id", text(task.id.as_str())),
        (":fence", int(codec::signed(fence, "attempt")?)),
    ];
    params.extend(mutable_params(task)?);
    Ok(params)
}

fn mutable_params(task: &Task) -> Result<Vec<Param<'_>>> {
    let approval = task.approval.as_ref();
    Ok(vec![
        (":state", text(task.state.as_str())),
        (
            ":attempt",
            int(codec::signed(task.attempt.get(), "attempt")?),
        ),
        (":attempts_used", int(task.attempts_used.into())),
        (":worker_id", optional(task.worker_id.as_deref(), text)),
        (":lease_expires_at", optional(task.lease_expires_at, time)),
        (":next_attempt_at", time(task.next_attempt_at)),
        (":last_error", optional(task.last_error.as_deref(), text)),
        (
            ":last_error_class",
            optional(task.last_error_class, |class| text(class.as_str())),
        ),
        (
            ":approval_action",
            optional(approval, |a| text(a.action.as_str())),
        ),
        (
            ":approval_requested_at",
            optional(approval, |a| time(a.requested_at)),
        ),
        (
            ":approval_decision",
            optional(approval.and_then(|a| a.decision), |approved| {
                int(approved.into())
            }),
        ),
        (
            ":approval_decided_by",
            optional(approval, |a| text(a.decided_by.as_str())),
        ),
        (
            ":approval_decided_at",
            optional(approval.and_then(|a| a.decided_at), time),
        ),
        (
            ":approval_comment",
            optional(approval, |a| text(a.comment.as_str())),
        ),
        (":updated_at", time(task.updated_at)),
        (
            ":approval_details",
            optional(approval, |a| blob(a.details.as_slice())),
        ),
        (":result", optional(task.result.as_deref(), blob)),
    ])
}

/// Reads one row selected with [`checkpointd_storage::task_columns`].
pub(super) fn decode(row: &Row<'_>) -> rusqlite::Result<Task> {
    let id: String = row.get("id")?;
    let run_id: String = row.get("run_id")?;
    let state: String = row.get("state")?;
    let approval = match row.get::<_, Option<i64>>("approval_requested_at")? {
        None => None,
        Some(requested_at) => Some(Approval {
            action: optional_text(row, "approval_action")?,
            details: match row.get_ref("approval_details")? {
                ValueRef::Null => Vec::new(),
                _ => codec::bytes(row, column(row, "approval_details")?)?,
            },
            requested_at: from_micros(requested_at),
            decision: row
                .get::<_, Option<i64>>("approval_decision")?
                .map(|decision| decision != 0),
            decided_by: optional_text(row, "approval_decided_by")?,
            decided_at: row
                .get::<_, Option<i64>>("approval_decided_at")?
                .map(from_micros),
            comment: optional_text(row, "approval_comment")?,
        }),
    };
    Ok(Task {
        id: TaskId::parse(&id).map_err(|_| damaged("id", &id))?,
        run_id: RunId::parse(&run_id).map_err(|_| damaged("run_id", &run_id))?,
        input: codec::bytes(row, column(row, "input")?)?,
        state: TaskState::parse(&state).map_err(|_| damaged("state", &state))?,
        attempt: Attempt::new(unsigned(row, "attempt")?),
        attempts_used: row.get("attempts_used")?,
        retry_policy: RetryPolicy {
            initial_delay: Duration::from_millis(unsigned(row, "initial_delay_ms")?),
            multiplier: row.get("multiplier")?,
            max_delay: Duration::from_millis(unsigned(row, "max_delay_ms")?),
            jitter: row.get("jitter")?,
            max_attempts: row.get("max_attempts")?,
        },
        idempotency_key: row.get("idempotency_key")?,
        auto_resume_hitl: row.get::<_, i64>("auto_resume_hitl")? != 0,
        worker_id: row.get("worker_id")?,
        lease_expires_at: row
            .get::<_, Option<i64>>("lease_expires_at")?
            .map(from_micros),
        next_attempt_at: from_micros(row.get("next_attempt_at")?),
        last_error: row.get("last_error")?,
        last_error_class: row
            .get::<_, Option<String>>("last_error_class")?
            .map(|class| ErrorClass::parse(&class)),
        approval,
        result: match row.get_ref("result")? {
            ValueRef::Null => None,
            _ => Some(codec::bytes(row, column(row, "result")?)?),
        },
        created_at: from_micros(row.get("created_at")?),
        updated_at: from_micros(row.get("updated_at")?),
    })
}

fn column(row: &Row<'_>, name: &str) -> rusqlite::Result<usize> {
    row.as_ref().column_index(name)
}

/// A counter or delay; a negative value fails the read (rusqlite decodes `u64` only with a
/// feature this crate does not enable).
fn unsigned(row: &Row<'_>, name: &str) -> rusqlite::Result<u64> {
    let value: i64 = row.get(name)?;
    u64::try_from(value).map_err(|_| {
        rusqlite::Error::IntegralValueOutOfRange(column(row, name).unwrap_or(0), value)
    })
}

fn optional_text(row: &Row<'_>, name: &str) -> rusqlite::Result<String> {
    Ok(row.get::<_, Option<String>>(name)?.unwrap_or_default())
}

/// A value no code path writes; surfaces as `Internal` through the error mapping.
fn damaged(name: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        Type::Text,
        format!("tasks.{name} holds {value:?}, which is not a valid value").into(),
    )
}

fn text(value: &str) -> ToSqlOutput<'_> {
    ToSqlOutput::Borrowed(ValueRef::Text(value.as_bytes()))
}

fn blob(value: &[u8]) -> ToSqlOutput<'_> {
    ToSqlOutput::Borrowed(ValueRef::Blob(value))
}

fn int(value: i64) -> ToSqlOutput<'static> {
    ToSqlOutput::Owned(Value::Integer(value))
}

fn time(value: SystemTime) -> ToSqlOutput<'static> {
    int(to_micros(value))
}

fn optional<'a, T>(value: Option<T>, some: impl FnOnce(T) -> ToSqlOutput<'a>) -> ToSqlOutput<'a> {
    value.map_or(ToSqlOutput::Owned(Value::Null), some)
}

/// Delays far beyond any sensible policy saturate rather than fail.
fn millis(delay: Duration) -> i64 {
    i64::try_from(delay.as_millis()).unwrap_or(i64::MAX)
}
