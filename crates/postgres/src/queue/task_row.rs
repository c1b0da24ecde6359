//! Conversions between a [`Task`] and its row in the `tasks` table.
//!
//! Unlike checkpoint payloads, nothing here is covered by a checksum that would catch a damaged
//! value later, so a value we could not have written (an unknown state, a negative counter, an
//! id that is not a UUID) fails the read as `Internal` instead of being read leniently.
//!
//! Timestamps keep whole microseconds and delays whole milliseconds, which is coarser than
//! `SystemTime` and `Duration`; the queue therefore answers with rows as written (`RETURNING`),
//! so what a call returns is exactly what a later read returns.

use std::time::{Duration, SystemTime};

use tokio_postgres::Row;
use tokio_postgres::types::{FromSql, ToSql};

use checkpointd_core::domain::{Attempt, RunId, Tenant};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::time::whole_micros;
use checkpointd_storage::queue::{Approval, ErrorClass, RetryPolicy, Task, TaskId, TaskState};

/// The changeable columns as `$3` to `$19`, in the order of [`TaskParams::mutable`]; inserts and
/// fenced updates both bind them there, after `$1` tenant and `$2` id.
macro_rules! task_mutable_assignments {
    () => {
        "state = $3, attempt = $4, attempts_used = $5, worker_id = $6, lease_expires_at = $7, \
         next_attempt_at = $8, last_error = $9, last_error_class = $10, approval_action = $11, \
         approval_requested_at = $12, approval_decision = $13, approval_decided_by = $14, \
         approval_decided_at = $15, approval_comment = $16, updated_at = $17, \
         approval_details = $18, result = $19"
    };
}
pub(super) use task_mutable_assignments;

/// Every value of a task row, ready to bind.
pub(super) struct TaskParams<'a> {
    tenant: &'a str,
    id: &'a str,
    state: &'static str,
    attempt: i64,
    attempts_used: i64,
    worker_id: Option<&'a str>,
    lease_expires_at: Option<SystemTime>,
    next_attempt_at: SystemTime,
    last_error: Option<&'a str>,
    last_error_class: Option<&'static str>,
    approval_action: Option<&'a str>,
    approval_requested_at: Option<SystemTime>,
    approval_decision: Option<bool>,
    approval_decided_by: Option<&'a str>,
    approval_decided_at: Option<SystemTime>,
    approval_comment: Option<&'a str>,
    updated_at: SystemTime,
    approval_details: Option<&'a [u8]>,
    result: Option<&'a [u8]>,
    run_id: &'a str,
    initial_delay_ms: i64,
    multiplier: f64,
    max_delay_ms: i64,
    jitter: f64,
    max_attempts: i64,
    idempotency_key: Option<&'a str>,
    created_at: SystemTime,
    input: &'a [u8],
    auto_resume_hitl: bool,
}

impl<'a> TaskParams<'a> {
    pub(super) fn new(tenant: &'a Tenant, task: &'a Task) -> Result<Self> {
        let policy = &task.retry_policy;
        let approval = task.approval.as_ref();
        Ok(Self {
            tenant: tenant.as_str(),
            id: task.id.as_str(),
            state: task.state.as_str(),
            attempt: signed(task.attempt)?,
            attempts_used: task.attempts_used.into(),
            worker_id: task.worker_id.as_deref(),
            lease_expires_at: task.lease_expires_at.map(whole_micros),
            next_attempt_at: whole_micros(task.next_attempt_at),
            last_error: task.last_error.as_deref(),
            last_error_class: task.last_error_class.map(ErrorClass::as_str),
            approval_action: approval.map(|a| a.action.as_str()),
            approval_requested_at: approval.map(|a| whole_micros(a.requested_at)),
            approval_decision: approval.and_then(|a| a.decision),
            approval_decided_by: approval.map(|a| a.decided_by.as_str()),
            approval_decided_at: approval.and_then(|a| a.decided_at).map(whole_micros),
            approval_comment: approval.map(|a| a.comment.as_str()),
            updated_at: whole_micros(task.updated_at),
            approval_details: approval.map(|a| a.details.as_slice()),
            result: task.result.as_deref(),
            run_id: task.run_id.as_str(),
            initial_delay_ms: millis(policy.initial_delay),
            multiplier: policy.multiplier,
            max_delay_ms: millis(policy.max_delay),
            jitter: policy.jitter,
            max_attempts: policy.max_attempts.into(),
            idempotency_key: task.idempotency_key.as_deref(),
            created_at: whole_micros(task.created_at),
            input: &task.input,
            auto_resume_hitl: task.auto_resume_hitl,
        })
    }

    /// `$1` tenant, `$2` id, `$3`..`$19` the changeable columns (see
    /// [`task_mutable_assignments`]).
    fn mutable(&self) -> [&(dyn ToSql + Sync); 19] {
        [
            &self.tenant,
            &self.id,
            &self.state,
            &self.attempt,
            &self.attempts_used,
            &self.worker_id,
            &self.lease_expires_at,
            &self.next_attempt_at,
            &self.last_error,
            &self.last_error_class,
            &self.approval_action,
            &self.approval_requested_at,
            &self.approval_decision,
            &self.approval_decided_by,
            &self.approval_decided_at,
            &self.approval_comment,
            &self.updated_at,
            &self.approval_details,
            &self.result,
        ]
    }

    /// The parameters of `INSERT_TASK`: the mutable ones, then `$20`..`$29` the columns fixed
    /// at enqueue.
    pub(super) fn insert(&self) -> Vec<&(dyn ToSql + Sync)> {
        let mut params = self.mutable().to_vec();
        params.extend_from_slice(&[
            &self.run_id as &(dyn ToSql + Sync),
            &self.initial_delay_ms,
            &self.multiplier,
            &self.max_delay_ms,
            &self.jitter,
            &self.max_attempts,
            &self.idempotency_key,
            &self.created_at,
            &self.input,
            &self.auto_resume_hitl,
        ]);
        params
    }

    /// The parameters of `STORE_TASK`: the mutable ones, then `$20` the attempt the row must
    /// still be at.
    pub(super) fn update<'b>(&'b self, fence: &'b i64) -> Vec<&'b (dyn ToSql + Sync)> {
        let mut params = self.mutable().to_vec();
        params.push(fence);
        params
    }
}

/// Reads one row selected with [`checkpointd_storage::task_columns`].
pub(super) fn decode(row: &Row) -> Result<Task> {
    let id: String = column(row, "id")?;
    let run_id: String = column(row, "run_id")?;
    let state: String = column(row, "state")?;
    let approval = match column::<Option<SystemTime>>(row, "approval_requested_at")? {
        None => None,
        Some(requested_at) => Some(Approval {
            action: text_or_empty(row, "approval_action")?,
            details: column::<Option<Vec<u8>>>(row, "approval_details")?.unwrap_or_default(),
            requested_at,
            decision: column(row, "approval_decision")?,
            decided_by: text_or_empty(row, "approval_decided_by")?,
            decided_at: column(row, "approval_decided_at")?,
            comment: text_or_empty(row, "approval_comment")?,
        }),
    };
    Ok(Task {
        id: TaskId::parse(&id).map_err(|_| damaged("id", &id))?,
        run_id: RunId::parse(&run_id).map_err(|_| damaged("run_id", &run_id))?,
        input: column(row, "input")?,
        state: TaskState::parse(&state).map_err(|_| damaged("state", &state))?,
        attempt: Attempt::new(in_range(row, "attempt")?),
        attempts_used: in_range(row, "attempts_used")?,
        retry_policy: RetryPolicy {
            initial_delay: Duration::from_millis(in_range(row, "initial_delay_ms")?),
            multiplier: column(row, "multiplier")?,
            max_delay: Duration::from_millis(in_range(row, "max_delay_ms")?),
            jitter: column(row, "jitter")?,
            max_attempts: in_range(row, "max_attempts")?,
        },
        idempotency_key: column(row, "idempotency_key")?,
        auto_resume_hitl: column(row, "auto_resume_hitl")?,
        worker_id: column(row, "worker_id")?,
        lease_expires_at: column(row, "lease_expires_at")?,
        next_attempt_at: column(row, "next_attempt_at")?,
        last_error: column(row, "last_error")?,
        last_error_class: column::<Option<String>>(row, "last_error_class")?
            .map(|class| ErrorClass::parse(&class)),
        approval,
        result: column(row, "result")?,
        created_at: column(row, "created_at")?,
        updated_at: column(row, "updated_at")?,
    })
}

/// One column by name; a type or NULL mismatch (a schema we did not create) is `Internal`.
fn column<'r, T: FromSql<'r>>(row: &'r Row, name: &str) -> Result<T> {
    row.try_get(name)
        .map_err(|error| Error::internal_from(format!("tasks.{name} cannot be read"), error))
}

fn text_or_empty(row: &Row, name: &str) -> Result<String> {
    Ok(column::<Option<String>>(row, name)?.unwrap_or_default())
}

/// A bigint counter or delay read back as the unsigned type it was written from.
fn in_range<T: TryFrom<i64>>(row: &Row, name: &str) -> Result<T> {
    let value: i64 = column(row, name)?;
    T::try_from(value).map_err(|_| damaged(name, &value.to_string()))
}

/// A value no code path writes.
fn damaged(name: &str, value: &str) -> Error {
    Error::internal(format!(
        "tasks.{name} holds {value:?}, which is not a valid value"
    ))
}

/// An attempt number as bigint; only a task claimed 2^63 times fails here.
pub(super) fn signed(attempt: Attempt) -> Result<i64> {
    i64::try_from(attempt.get())
        .map_err(|_| Error::InvalidArgument(format!("attempt {attempt} is larger than 2^63 - 1")))
}

/// Delays far beyond any sensible policy saturate rather than fail.
fn millis(delay: Duration) -> i64 {
    i64::try_from(delay.as_millis()).unwrap_or(i64::MAX)
}
