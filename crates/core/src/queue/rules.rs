//! What every queue transition does, as pure functions shared by all backends.

use std::time::{Duration, SystemTime};

use super::{Approval, ErrorClass, RetryPolicy, Task, TaskId, TaskState, Transition};
use crate::domain::Attempt;
use crate::error::{Error, Result, failure};
use crate::time::random_unit;

/// Longest error text kept on a task.
pub const MAX_ERROR_BYTES: usize = 8 * 1024;

/// Whether a claim may take this task now: pending and due, or running with an expired lease
/// and an attempt left. A stale task that used its last attempt is the reaper's (see
/// [`reapable`]), never a claim's, so a claim only ever claims.
pub fn claimable(task: &Task, now: SystemTime) -> bool {
    match task.state {
        TaskState::Pending => task.next_attempt_at <= now,
        TaskState::Running => lease_expired(task, now) && !attempts_exhausted(task),
        _ => false,
    }
}

/// Whether a decision left this task parked: in input_required with the approval decided,
/// which only a task with `auto_resume_hitl` off stays in. Neither claimable nor decidable
/// again; [`Transition::ResumeTask`] makes it pending.
pub fn parked_after_decision(task: &Task) -> bool {
    task.state == TaskState::InputRequired
        && task
            .approval
            .as_ref()
            .is_some_and(|approval| approval.decision.is_some())
}

/// Whether the reaper buries this task now: running with an expired lease on its last attempt.
pub fn reapable(task: &Task, now: SystemTime) -> bool {
    task.state == TaskState::Running && lease_expired(task, now) && attempts_exhausted(task)
}

/// The order claims take tasks in: the one due longest first, ties by id (creation).
pub fn claim_order(task: &Task) -> (SystemTime, &TaskId) {
    (task.next_attempt_at, &task.id)
}

/// The order the reaper buries tasks in: the lease that expired longest ago first.
pub fn reap_order(task: &Task) -> (Option<SystemTime>, &TaskId) {
    (task.lease_expires_at, &task.id)
}

/// A task as a backend holds it while choosing: alone, or beside its key.
pub trait Candidate {
    fn task(&self) -> &Task;
}

impl Candidate for Task {
    fn task(&self) -> &Task {
        self
    }
}

impl<K> Candidate for (K, Task) {
    fn task(&self) -> &Task {
        &self.1
    }
}

impl<K> Candidate for (K, &Task) {
    fn task(&self) -> &Task {
        self.1
    }
}

/// Which of `candidates` a claim of `batch` tasks takes, in claim order: the selection every
/// backend that selects in Rust makes (the Postgres claim states it in SQL).
pub fn select_claims<C: Candidate>(
    candidates: impl IntoIterator<Item = C>,
    now: SystemTime,
    batch: usize,
) -> Vec<C> {
    let by_claim_order = |a: &Task, b: &Task| claim_order(a).cmp(&claim_order(b));
    select(
        candidates,
        |task| claimable(task, now),
        by_claim_order,
        batch,
    )
}

/// Which of `candidates` a reaper pass of `limit` tasks buries, in reap order.
pub fn select_reaps<C: Candidate>(
    candidates: impl IntoIterator<Item = C>,
    now: SystemTime,
    limit: usize,
) -> Vec<C> {
    let by_reap_order = |a: &Task, b: &Task| reap_order(a).cmp(&reap_order(b));
    select(candidates, |task| reapable(task, now), by_reap_order, limit)
}

fn select<C: Candidate>(
    candidates: impl IntoIterator<Item = C>,
    keep: impl Fn(&Task) -> bool,
    order: impl Fn(&Task, &Task) -> std::cmp::Ordering,
    limit: usize,
) -> Vec<C> {
    let mut chosen: Vec<C> = candidates
        .into_iter()
        .filter(|candidate| keep(candidate.task()))
        .collect();
    chosen.sort_by(|a, b| order(a.task(), b.task()));
    chosen.truncate(limit);
    chosen
}

/// Leases a claimable task to `worker`. Every claim, a reclaim included, is a new attempt.
pub fn claim(task: &Task, worker: &str, lease: Duration, now: SystemTime) -> Task {
    let mut next = task.clone();
    next.updated_at = now;
    if task.state == TaskState::Running {
        next.last_error = Some(format!(
            "lease of worker {} expired; reclaimed",
            task.worker_id.as_deref().unwrap_or("?")
        ));
        next.last_error_class = Some(ErrorClass::Transient);
    }
    next.state = TaskState::Running;
    next.attempt = next.attempt.next();
    next.attempts_used += 1;
    next.worker_id = Some(worker.to_owned());
    next.lease_expires_at = Some(later(now, lease));
    next
}

/// Buries a reapable task: a dead letter whose error names the worker that lost the lease.
/// The attempt stays, so a zombie of the last lease is still fenced off.
pub fn reap(task: &Task, now: SystemTime) -> Task {
    let mut next = task.clone();
    next.updated_at = now;
    next.state = TaskState::Dead;
    next.last_error = Some(format!(
        "lease of worker {} expired on the final attempt",
        task.worker_id.as_deref().unwrap_or("?")
    ));
    next.last_error_class = Some(ErrorClass::Transient);
    release_lease(&mut next);
    next
}

fn lease_expired(task: &Task, now: SystemTime) -> bool {
    task.lease_expires_at.is_some_and(|expiry| expiry <= now)
}

fn attempts_exhausted(task: &Task) -> bool {
    task.attempts_used >= task.retry_policy.max_attempts
}

/// Applies a transition, or explains why it is not allowed (and then nothing changes).
pub fn apply(task: &Task, transition: Transition, now: SystemTime) -> Result<Task> {
    let mut next = task.clone();
    next.updated_at = now;
    match transition {
        Transition::Heartbeat { attempt, lease } => {
            fence(task, attempt)?;
            next.lease_expires_at = Some(later(now, lease));
        }
        Transition::Complete { attempt, result } => {
            fence(task, attempt)?;
            next.state = TaskState::Completed;
            next.result = Some(result);
            // The error of an earlier attempt (a reclaim, a retried failure) no longer
            // describes a task that succeeded; the attempt count still tells it took several.
            next.last_error = None;
            next.last_error_class = None;
            release_lease(&mut next);
        }
        Transition::Fail {
            attempt,
            error,
            class,
        } => {
            fence(task, attempt)?;
            next.last_error = Some(failure::truncated(error, MAX_ERROR_BYTES));
            next.last_error_class = Some(class);
            release_lease(&mut next);
            next.state = match class {
                ErrorClass::Fatal => TaskState::Failed,
                ErrorClass::Transient if attempts_exhausted(task) => TaskState::Dead,
                ErrorClass::Transient => {
                    next.next_attempt_at = later(
                        now,
                        backoff(&task.retry_policy, task.attempts_used, random_unit()),
                    );
                    TaskState::Pending
                }
            };
        }
        Transition::Release { attempt } => {
            fence(task, attempt)?;
            refund(&mut next);
            next.state = TaskState::Pending;
            next.next_attempt_at = now;
        }
        Transition::RequestApproval {
            attempt,
            action,
            details,
        } => {
            fence(task, attempt)?;
            // Waiting for a human is not a failed run.
            refund(&mut next);
            next.state = TaskState::InputRequired;
            next.approval = Some(Approval {
                action,
                details,
                requested_at: now,
                decision: None,
                decided_by: String::new(),
                decided_at: None,
                comment: String::new(),
            });
        }
        Transition::Decide {
            approved,
            decided_by,
            comment,
        } => {
            if task.state != TaskState::InputRequired {
                return Err(Error::TaskState(format!(
                    "task {} is {}, not waiting for approval",
                    task.id,
                    task.state.as_str()
                )));
            }
            if parked_after_decision(task) {
                // The first decision stands: it is the one the audit trail shows.
                return Err(Error::TaskState(format!(
                    "task {} was already decided and is parked; resume it (ResumeTask)",
                    task.id
                )));
            }
            let approval = next.approval.get_or_insert_with(|| Approval {
                action: String::new(),
                details: Vec::new(),
                requested_at: now,
                decision: None,
                decided_by: String::new(),
                decided_at: None,
                comment: String::new(),
            });
            approval.decision = Some(approved);
            approval.decided_by = decided_by;
            approval.decided_at = Some(now);
            approval.comment = comment;
            if task.auto_resume_hitl {
                next.state = TaskState::Pending;
                next.next_attempt_at = now;
            }
        }
        Transition::ResumeTask => {
            if !parked_after_decision(task) {
                let why = match task.state {
                    TaskState::InputRequired => "still awaiting a decision",
                    _ => "not parked after a decision",
                };
                return Err(Error::TaskState(format!(
                    "task {} is {}, {why}",
                    task.id,
                    task.state.as_str()
                )));
            }
            next.state = TaskState::Pending;
            next.next_attempt_at = now;
        }
        Transition::Cancel => {
            if task.state.is_final() {
                return Err(Error::TaskState(format!(
                    "task {} is already {}",
                    task.id,
                    task.state.as_str()
                )));
            }
            next.state = TaskState::Cancelled;
            release_lease(&mut next);
        }
        Transition::Requeue => {
            if !matches!(task.state, TaskState::Dead | TaskState::Failed) {
                return Err(Error::TaskState(format!(
                    "task {} is {}; only dead or failed tasks can be requeued",
                    task.id,
                    task.state.as_str()
                )));
            }
            next.state = TaskState::Pending;
            next.attempts_used = 0;
            next.next_attempt_at = now;
            // A revived task starts clean; its last error stays for the operator to see.
            next.approval = None;
            next.result = None;
        }
    }
    Ok(next)
}

/// The delay before the retry that follows failure number `failures` (1-based):
/// `initial * multiplier^(failures-1)`, spread by `jitter`, never above `max_delay`.
/// `unit` is a random number in [0, 1).
pub fn backoff(policy: &RetryPolicy, failures: u32, unit: f64) -> Duration {
    let exponent = failures.saturating_sub(1).min(1000) as i32;
    let base = policy.initial_delay.as_secs_f64() * policy.multiplier.powi(exponent);
    let capped = base.min(policy.max_delay.as_secs_f64());
    let spread = 1.0 + policy.jitter * (2.0 * unit - 1.0);
    Duration::from_secs_f64((capped * spread).clamp(0.0, policy.max_delay.as_secs_f64()))
}

/// `now + delay`, saturating far in the future instead of overflowing.
pub fn later(now: SystemTime, delay: Duration) -> SystemTime {
    now.checked_add(delay)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// Only the current lease holder may move a running task on.
fn fence(task: &Task, attempt: Attempt) -> Result<()> {
    if task.state != TaskState::Running || task.attempt != attempt {
        return Err(Error::LeaseLost(format!(
            "lease lost: task {} is {} at attempt {}, not running at attempt {attempt}",
            task.id,
            task.state.as_str(),
            task.attempt
        )));
    }
    Ok(())
}

fn release_lease(task: &mut Task) {
    task.worker_id = None;
    task.lease_expires_at = None;
}

fn refund(task: &mut Task) {
    release_lease(task);
    task.attempts_used = task.attempts_used.saturating_sub(1);
}

#[cfg(test)]
mod parking_tests;

#[cfg(test)]
mod tests;
