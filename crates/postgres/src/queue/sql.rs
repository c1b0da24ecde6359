//! The SQL text of every statement the Postgres task queue prepares, in one place.
//!
//! Every statement but the reaper's pick (a plain read) is scoped by `tenant = $1`, and every
//! time is a parameter (the caller's `now`), never the database clock, so tests move time by
//! passing it.

use super::task_row::task_mutable_assignments;
use checkpointd_storage::task_columns;

/// Inserts a task unless the tenant already has one with its idempotency key; no row back means
/// the key was taken (read the winner with `TASK_BY_KEY`). Parameters: see
/// `TaskParams::insert`.
pub(super) const INSERT_TASK: &str = concat!(
    "INSERT INTO tasks (tenant, id, state, attempt, attempts_used, worker_id, lease_expires_at,
                   next_attempt_at, last_error, last_error_class, approval_action,
                   approval_requested_at, approval_decision, approval_decided_by,
                   approval_decided_at, approval_comment, updated_at, approval_details, result,
                   run_id, initial_delay_ms, multiplier, max_delay_ms, jitter, max_attempts,
                   idempotency_key, created_at, input, auto_resume_hitl)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
        $20, $21, $22, $23, $24, $25, $26, $27, $28, $29)
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

/// Claims up to `$3` tasks in one statement, the underway/apalis way.
///
/// `due` locks the claimable rows (`rules::claimable`: pending and due, or running with an
/// expired lease and an attempt left) in claim order (`rules::claim_order`), skipping rows
/// another claim has locked, so two concurrent claims never take one task and neither waits
/// for the other. The candidates come from one ordered index scan per claimable state, merged
/// (MergeAppend) and read lazily, so a claim reads about as many rows as it locks however deep
/// the due backlog; a single scan with `OR` made Postgres sort the whole backlog on every
/// claim (about 100 ms at 200k due tasks, against 0.5 ms this way). The condition is repeated
/// on the locked row `t`: a row changed by a claim that committed after this statement's
/// snapshot is rechecked against it once locked (READ COMMITTED), so a task just claimed
/// elsewhere drops out, and a skipped row does not end the scan early. Stale tasks without an
/// attempt left are the reaper's (`LOCK_REAPABLE`) and never claimed.
///
/// The UPDATE then does what `rules::claim` does, column for column (the behaviour suite's
/// `rules_agree` compares the two): running, attempt + 1, attempts_used + 1, worker `$4`,
/// lease until `$5`; a reclaim also records the lost lease as a transient error, in the
/// rules' words. `$2` is `now` and becomes `updated_at`; `$5` is `now + lease`, computed in
/// Rust. The claimed rows come back in claim order.
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
            AND attempts_used < max_attempts
          ORDER BY next_attempt_at, id)
    ) AS candidate
    JOIN tasks AS t ON t.tenant = $1 AND t.id = candidate.id
    WHERE (t.state = 'pending' AND t.next_attempt_at <= $2::timestamptz)
       OR (t.state = 'running' AND t.lease_expires_at <= $2::timestamptz
           AND t.attempts_used < t.max_attempts)
    ORDER BY candidate.next_attempt_at, candidate.id
    LIMIT $3::bigint
    FOR UPDATE OF t SKIP LOCKED
), claimed AS (
    UPDATE tasks AS t SET
        state = 'running',
        attempt = t.attempt + 1,
        attempts_used = t.attempts_used + 1,
        worker_id = $4::text,
        lease_expires_at = $5::timestamptz,
        last_error = CASE WHEN t.state = 'running'
            THEN 'lease of worker ' || coalesce(t.worker_id, '?') || ' expired; reclaimed'
            ELSE t.last_error END,
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
    " FROM claimed ORDER BY next_attempt_at, id"
);

/// The reaper's pick, a plain read without locks: up to `$2` running tasks of any tenant whose
/// lease expired by `$1` on their last attempt, the longest expired first. The partial index of
/// running tasks bounds the scan by the tasks now leased, however deep the backlog. Each
/// tenant's picks are then locked by `LOCK_REAPABLE`, one tenant at a time (on Citus a row lock
/// is taken within one shard, never across tenants).
pub(super) const REAP_CANDIDATES: &str = "SELECT tenant, id FROM tasks
     WHERE state = 'running' AND lease_expires_at <= $1::timestamptz
       AND attempts_used >= max_attempts
     ORDER BY lease_expires_at, id
     LIMIT $2::bigint";

/// The reaper's lock, within tenant `$1`: those of the picked tasks `$2` still reapable at `$3`
/// (what `rules::reapable` decides again on each), locked, the longest expired first. Rows a
/// claim or transition holds are skipped for the next pass.
pub(super) const LOCK_REAPABLE: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM tasks
     WHERE tenant = $1 AND id = ANY ($2::text[])
       AND state = 'running' AND lease_expires_at <= $3::timestamptz
       AND attempts_used >= max_attempts
     ORDER BY lease_expires_at, id
     FOR UPDATE SKIP LOCKED"
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
