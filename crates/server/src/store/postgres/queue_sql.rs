//! The SQL text of every statement the Postgres task queue prepares, in one place.
//!
//! Every statement is scoped by `tenant = $1` and every time is a parameter (the caller's
//! `now`), never the database clock, so tests move time by passing it.

use super::task_row::{task_columns, task_mutable_assignments};

/// Inserts a task unless the tenant already has one with its idempotency key; no row back means
/// the key was taken (read the winner with `TASK_BY_KEY`). Parameters: see
/// `TaskParams::insert`.
pub(super) const INSERT_TASK: &str = concat!(
    "INSERT INTO tasks (tenant, id, state, attempt, attempts_used, worker_id, lease_expires_at,
                   next_attempt_at, last_error, last_error_class, approval_action,
                   approval_requested_at, approval_decision, approval_decided_by,
                   approval_decided_at, approval_comment, updated_at, approval_details, result,
                   run_id, initial_delay_ms, multiplier, max_delay_ms, jitter, max_attempts,
                   idempotency_key, created_at, input)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
        $20, $21, $22, $23, $24, $25, $26, $27, $28)
ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING ",
    task_columns!()
);

pub(super) const TASK_BY_KEY: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM tasks WHERE tenant = $1 AND idempotency_key = $2"
);

pub(super) const TASK: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM tasks WHERE tenant = $1 AND id = $2"
);

/// The first statement of a transition: the row, locked until commit or rollback.
pub(super) const LOCK_TASK: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM tasks WHERE tenant = $1 AND id = $2 FOR UPDATE"
);

/// Writes a transition's outcome, fenced on the attempt the row was read at (`$20`): zero rows
/// means the lease was lost (contract 5). Parameters: see `TaskParams::update`.
pub(super) const STORE_TASK: &str = concat!(
    "UPDATE tasks SET ",
    task_mutable_assignments!(),
    " WHERE tenant = $1 AND id = $2 AND attempt = $20 RETURNING ",
    task_columns!()
);

/// Whether the claim turns the row into a dead letter instead: a stale running task that has
/// used its last attempt. Evaluated on the row as locked (UPDATE's SET sees the old values).
macro_rules! dies {
    () => {
        "(t.state = 'running' AND t.attempts_used >= t.max_attempts)"
    };
}

/// Claims up to `$3` tasks in one statement, the underway/apalis way.
///
/// `due` locks the claimable rows (`rules::claimable`: pending and due, or running with an
/// expired lease) in the order they became due, skipping rows another claim has locked, so two
/// concurrent claims never take one task and neither waits for the other. The candidates come
/// from one ordered index scan per claimable state, merged (MergeAppend) and read lazily, so a
/// claim reads about as many rows as it locks however deep the due backlog; a single scan with
/// `OR` made Postgres sort the whole backlog on every claim (about 100 ms at 200k due tasks,
/// against 0.5 ms this way). The condition is repeated on the locked row `t`: a row changed by
/// a claim that committed after this statement's snapshot is rechecked against it once locked
/// (READ COMMITTED), so a task just claimed elsewhere drops out, and a skipped row does not end
/// the scan early.
///
/// The UPDATE then does what `rules::claim` does, column for column; the texts and the death
/// rule must stay in step with it (`tests::claim_rules` compares the two):
/// * a claim: running, attempt + 1, attempts_used + 1, worker `$4`, lease until `$5`; a
///   reclaim also records the lost lease as a transient error;
/// * a stale task on its final attempt: dead, lease cleared, the same error text as the rules.
///
/// Only tasks now running are returned, in claim order. `$2` is `now` and becomes `updated_at`;
/// `$5` is `now + lease`, computed in Rust.
pub(super) const CLAIM: &str = concat!(
    "WITH due AS (
    SELECT t.id AS due_id
    FROM (
        (SELECT id, next_attempt_at FROM tasks
          WHERE tenant = $1 AND state = 'pending' AND next_attempt_at <= $2::timestamptz
          ORDER BY next_attempt_at, id)
        UNION ALL
        (SELECT id, next_attempt_at FROM tasks
          WHERE tenant = $1 AND state = 'running' AND lease_expires_at <= $2::timestamptz
          ORDER BY next_attempt_at, id)
    ) AS candidate
    JOIN tasks AS t ON t.tenant = $1 AND t.id = candidate.id
    WHERE (t.state = 'pending' AND t.next_attempt_at <= $2::timestamptz)
       OR (t.state = 'running' AND t.lease_expires_at <= $2::timestamptz)
    ORDER BY candidate.next_attempt_at, candidate.id
    LIMIT $3::bigint
    FOR UPDATE OF t SKIP LOCKED
), claimed AS (
    UPDATE tasks AS t SET
        state = CASE WHEN ",
    dies!(),
    " THEN 'dead' ELSE 'running' END,
        attempt = CASE WHEN ",
    dies!(),
    " THEN t.attempt ELSE t.attempt + 1 END,
        attempts_used = CASE WHEN ",
    dies!(),
    " THEN t.attempts_used ELSE t.attempts_used + 1 END,
        worker_id = CASE WHEN ",
    dies!(),
    " THEN NULL ELSE $4::text END,
        lease_expires_at = CASE WHEN ",
    dies!(),
    " THEN NULL ELSE $5::timestamptz END,
        last_error = CASE
            WHEN t.state <> 'running' THEN t.last_error
            WHEN ",
    dies!(),
    " THEN 'lease of worker ' || coalesce(t.worker_id, '?') || ' expired on the final attempt'
            ELSE 'lease of worker ' || coalesce(t.worker_id, '?') || ' expired; reclaimed'
        END,
        last_error_class = CASE WHEN t.state = 'running' THEN 'transient'
                                ELSE t.last_error_class END,
        updated_at = $2::timestamptz
    FROM due
    WHERE t.tenant = $1 AND t.id = due.due_id
    RETURNING ",
    task_columns!(),
    "
)
SELECT ",
    task_columns!(),
    " FROM claimed WHERE state = 'running' ORDER BY next_attempt_at, id"
);

/// A page of tasks in id (creation) order. Without `after` the page starts before every id: a
/// UUID's text is never empty, so `id > ''` holds for all of them.
pub(super) const LIST_TASKS: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM tasks WHERE tenant = $1 AND id > $2 ORDER BY id LIMIT $3"
);

pub(super) const LIST_TASKS_IN_STATE: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM tasks WHERE tenant = $1 AND id > $2 AND state = $4 ORDER BY id LIMIT $3"
);
