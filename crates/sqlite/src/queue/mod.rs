//! The task queue on SQLite: same file, same connections as the checkpoint store.
//!
//! Every write is one IMMEDIATE transaction on the writer connection: it takes SQLite's write
//! lock before its first read, so the rows a claim or transition reads cannot change before it
//! writes them back, even with another process on the same file. Read, apply [`rules`] in
//! Rust, write back is therefore atomic (SQLite's stand-in for Postgres's
//! `FOR UPDATE SKIP LOCKED`: claims are serialised rather than skipping each other), and two
//! concurrent claims can never take the same task. What each transition does is decided by [`rules`]
//! alone; the SQL only narrows the rows and stores the outcome. Reads go to the read
//! connection. Time is always the caller's `now`, never the database clock.

#[cfg(test)]
#[cfg(test)]
mod migration_tests;
mod task_row;
#[cfg(test)]
pub(super) mod tests;
mod waiting;

use checkpointd_storage::task_columns;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, named_params};

use self::task_row::{decode, insert_params, task_mutable_assignments, update_params};
use crate::SqliteStore;
use crate::codec::to_micros;
use crate::error::DbResultExt;
use crate::notifications::record_event;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::{Error, Result};
use checkpointd_core::notify::task_event;
use checkpointd_storage::queue::{
    ClaimBatch, NewTask, Task, TaskId, TaskQueue, TaskState, Transition, WaitingPage, WaitingQuery,
    rules,
};

/// The task queue in a [`SqliteStore`]'s database, on the store's own connections.
pub struct SqliteQueue {
    db: Arc<SqliteStore>,
}

impl SqliteQueue {
    /// The queue in `db`'s file; the store's migrations created its table.
    pub fn new(db: Arc<SqliteStore>) -> Self {
        Self { db }
    }

    async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        self.db.write(work).await
    }

    async fn read<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        self.db.read(work).await
    }
}

#[async_trait]
impl TaskQueue for SqliteQueue {
    async fn enqueue(&self, tenant: &Tenant, task: NewTask) -> Result<(Task, bool)> {
        let tenant = tenant.clone();
        self.write(move |conn| enqueue(conn, &tenant, task)).await
    }

    async fn claim(
        &self,
        tenant: &Tenant,
        worker: &str,
        lease: Duration,
        batch: ClaimBatch,
        now: SystemTime,
    ) -> Result<Vec<Task>> {
        if batch.get() == 0 {
            return Ok(Vec::new());
        }
        let (tenant, worker) = (tenant.clone(), worker.to_owned());
        self.write(move |conn| claim(conn, &tenant, &worker, lease, batch.as_usize(), now))
            .await
    }

    async fn update(
        &self,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task> {
        let (tenant, id) = (tenant.clone(), id.clone());
        self.write(move |conn| update(conn, &tenant, &id, transition, now))
            .await
    }

    async fn get(&self, tenant: &Tenant, id: &TaskId) -> Result<Option<Task>> {
        let (tenant, id) = (tenant.clone(), id.clone());
        self.read(move |conn| select(conn, &tenant, &id)).await
    }

    async fn list_tasks(
        &self,
        tenant: &Tenant,
        state: Option<TaskState>,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<Task>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let tenant = tenant.clone();
        let after = after.cloned();
        self.read(move |conn| list(conn, &tenant, state, after.as_ref(), limit))
            .await
    }

    async fn list_waiting(&self, tenant: &Tenant, query: &WaitingQuery) -> Result<WaitingPage> {
        let (tenant, query) = (tenant.clone(), query.clone());
        self.read(move |conn| waiting::list_waiting(conn, &tenant, &query))
            .await
    }

    async fn reap_exhausted(&self, now: SystemTime, limit: usize) -> Result<u64> {
        if limit == 0 {
            return Ok(0);
        }
        self.write(move |conn| reap(conn, now, limit)).await
    }

    async fn depth(&self) -> Result<Vec<(TaskState, u64)>> {
        self.read(|conn| {
            let mut statement = conn
                .prepare_cached("SELECT state, count(*) FROM tasks GROUP BY state")
                .db()?;
            let rows = statement
                .query_map([], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
                })
                .db()?;
            let mut depth = Vec::new();
            for row in rows {
                let (state, count) = row.db()?;
                depth.push((TaskState::parse(&state)?, count.max(0) as u64));
            }
            Ok(depth)
        })
        .await
    }
}

/// Inserts a row with every column; parameters: see [`insert_params`].
const INSERT_TASK: &str = concat!(
    "INSERT INTO tasks (tenant, id, run_id, initial_delay_ms, multiplier, max_delay_ms,
                                jitter, max_attempts, idempotency_key, created_at, input,
                                state, attempt, attempts_used, worker_id, lease_expires_at,
                                next_attempt_at, last_error, last_error_class, approval_action,
                                approval_requested_at, approval_decision, approval_decided_by,
                                approval_decided_at, approval_comment, updated_at,
                                approval_details, result, auto_resume_hitl)
             VALUES (:tenant, :id, :run_id, :initial_delay_ms, :multiplier, :max_delay_ms,
                     :jitter, :max_attempts, :idempotency_key, :created_at, :input,
                     :state, :attempt, :attempts_used, :worker_id, :lease_expires_at,
                     :next_attempt_at, :last_error, :last_error_class, :approval_action,
                     :approval_requested_at, :approval_decision, :approval_decided_by,
                     :approval_decided_at, :approval_comment, :updated_at,
                     :approval_details, :result, :auto_resume_hitl)
             RETURNING ",
    task_columns!()
);

fn begin(conn: &mut Connection) -> Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .db()
}

/// Insert, unless the tenant already has a task with this idempotency key. The key is looked up
/// under the write lock, so two enqueues with one key cannot both insert.
fn enqueue(conn: &mut Connection, tenant: &Tenant, new: NewTask) -> Result<(Task, bool)> {
    let tx = begin(conn)?;
    if let Some(key) = &new.idempotency_key {
        let existing = tx
            .prepare_cached(concat!(
                "SELECT ",
                task_columns!(),
                " FROM tasks WHERE tenant = :tenant AND idempotency_key = :key"
            ))
            .db()?
            .query_row(
                named_params! { ":tenant": tenant.as_str(), ":key": key },
                decode,
            )
            .optional()
            .db()?;
        if let Some(existing) = existing {
            return Ok((existing, true));
        }
    }
    let task = Task::new(new, SystemTime::now());
    let stored = tx
        .prepare_cached(INSERT_TASK)
        .db()?
        .query_row(insert_params(tenant, &task)?.as_slice(), decode)
        .db()?;
    tx.commit().db()?;
    Ok((stored, false))
}

/// Reads up to `batch` claimable tasks in claim order, claims each by the rules and writes it
/// back, all under one write lock.
fn claim(
    conn: &mut Connection,
    tenant: &Tenant,
    worker: &str,
    lease: Duration,
    batch: usize,
    now: SystemTime,
) -> Result<Vec<Task>> {
    let tx = begin(conn)?;
    // One leg per claimable state, each read in order off its own index and cut at the batch
    // size, so a claim looks at no more than 2 * batch index entries however deep the backlog;
    // only the chosen rows are then read in full (inputs can be large). Stale tasks without an
    // attempt left are the reaper's and must not take a place in the batch.
    let due = tx
        .prepare_cached(concat!(
            "WITH due (due_id, due_at) AS (
                 SELECT * FROM (
                     SELECT id, next_attempt_at FROM tasks
                      WHERE tenant = :tenant AND state = 'pending' AND next_attempt_at <= :now
                      ORDER BY next_attempt_at, id LIMIT :batch)
                 UNION ALL
                 SELECT * FROM (
                     SELECT id, next_attempt_at FROM tasks
                      WHERE tenant = :tenant AND state = 'running' AND lease_expires_at <= :now
                        AND attempts_used < max_attempts
                      ORDER BY next_attempt_at, id LIMIT :batch)
                 ORDER BY next_attempt_at, id LIMIT :batch)
             SELECT ",
            task_columns!(),
            " FROM due JOIN tasks ON tenant = :tenant AND id = due_id ORDER BY due_at, due_id"
        ))
        .db()?
        .query_map(
            named_params! {
                ":tenant": tenant.as_str(),
                ":now": to_micros(now),
                ":batch": i64::try_from(batch).unwrap_or(i64::MAX),
            },
            decode,
        )
        .db()?
        .collect::<rusqlite::Result<Vec<Task>>>()
        .db()?;
    // The rules have the last word on what is claimable and in which order; the SQL narrows.
    let claimed = rules::select_claims(due, now, batch)
        .iter()
        .map(|task| {
            let next = rules::claim(task, worker, lease, now);
            store(&tx, tenant, task.attempt.get(), &next)
        })
        .collect::<Result<Vec<Task>>>()?;
    tx.commit().db()?;
    Ok(claimed)
}

/// Buries up to `limit` reapable tasks of every tenant under one write lock. The narrowing
/// reads the partial index of running tasks, which holds only the tasks now leased.
fn reap(conn: &mut Connection, now: SystemTime, limit: usize) -> Result<u64> {
    let tx = begin(conn)?;
    let stale = tx
        .prepare_cached(concat!(
            "SELECT tenant, ",
            task_columns!(),
            " FROM tasks WHERE state = 'running' AND lease_expires_at <= :now
                AND attempts_used >= max_attempts
              ORDER BY lease_expires_at, id LIMIT :limit"
        ))
        .db()?
        .query_map(
            named_params! {
                ":now": to_micros(now),
                ":limit": i64::try_from(limit).unwrap_or(i64::MAX),
            },
            |row| Ok((row.get::<_, String>("tenant")?, decode(row)?)),
        )
        .db()?
        .collect::<rusqlite::Result<Vec<(String, Task)>>>()
        .db()?;
    let doomed = rules::select_reaps(stale, now, limit);
    for (tenant, task) in &doomed {
        let tenant = Tenant::parse(tenant)?;
        let buried = store(&tx, &tenant, task.attempt.get(), &rules::reap(task, now))?;
        if let Some(event) = task_event(&tenant, task, &buried, now) {
            record_event(&tx, &event)?;
        }
    }
    tx.commit().db()?;
    Ok(doomed.len() as u64)
}

/// Reads the task, applies the transition and writes it back under one write lock. When the
/// rules refuse, the transaction is dropped unwritten and nothing changes.
fn update(
    conn: &mut Connection,
    tenant: &Tenant,
    id: &TaskId,
    transition: Transition,
    now: SystemTime,
) -> Result<Task> {
    let tx = begin(conn)?;
    let task = select(&tx, tenant, id)?.ok_or_else(|| Error::task_not_found(id))?;
    let next = rules::apply(&task, transition, now)?;
    let stored = store(&tx, tenant, task.attempt.get(), &next)?;
    // The event is committed with the transition or not at all (contract 12).
    if let Some(event) = task_event(tenant, &task, &stored, now) {
        record_event(&tx, &event)?;
    }
    tx.commit().db()?;
    Ok(stored)
}

/// Writes a task's changeable columns back, fenced on the attempt it was read at, and returns
/// the row as stored.
///
/// Under the IMMEDIATE transaction the fence cannot fail; it is kept so that the write is
/// correct on its own (contract 5: zero rows updated means the lease was lost).
fn store(tx: &Transaction<'_>, tenant: &Tenant, fence: u64, task: &Task) -> Result<Task> {
    tx.prepare_cached(concat!(
        "UPDATE tasks SET ",
        task_mutable_assignments!(),
        " WHERE tenant = :tenant AND id = :id AND attempt = :fence RETURNING ",
        task_columns!()
    ))
    .db()?
    .query_row(update_params(tenant, task, fence)?.as_slice(), decode)
    .optional()
    .db()?
    .ok_or_else(|| {
        Error::LeaseLost(format!(
            "lease lost: task {} is no longer at attempt {fence}",
            task.id
        ))
    })
}

fn select(conn: &Connection, tenant: &Tenant, id: &TaskId) -> Result<Option<Task>> {
    conn.prepare_cached(concat!(
        "SELECT ",
        task_columns!(),
        " FROM tasks WHERE tenant = :tenant AND id = :id"
    ))
    .db()?
    .query_row(
        named_params! { ":tenant": tenant.as_str(), ":id": id.as_str() },
        decode,
    )
    .optional()
    .db()
}

/// A page of tasks in id (creation) order. Without `after` the page starts before every id: a
/// UUID's text is never empty, so `id > ''` holds for all of them and the same range scan on
/// the primary key serves the first page and the rest.
fn list(
    conn: &Connection,
    tenant: &Tenant,
    state: Option<TaskState>,
    after: Option<&TaskId>,
    limit: usize,
) -> Result<Vec<Task>> {
    let after = after.map_or("", TaskId::as_str);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = match state {
        None => conn
            .prepare_cached(concat!(
                "SELECT ",
                task_columns!(),
                " FROM tasks WHERE tenant = :tenant AND id > :after ORDER BY id LIMIT :limit"
            ))
            .db()?
            .query_map(
                named_params! { ":tenant": tenant.as_str(), ":after": after, ":limit": limit },
                decode,
            )
            .db()?
            .collect::<rusqlite::Result<Vec<Task>>>(),
        Some(state) => conn
            .prepare_cached(concat!(
                "SELECT ",
                task_columns!(),
                " FROM tasks WHERE tenant = :tenant AND state = :state AND id > :after
                   ORDER BY id LIMIT :limit"
            ))
            .db()?
            .query_map(
                named_params! {
                    ":tenant": tenant.as_str(),
                    ":state": state.as_str(),
                    ":after": after,
                    ":limit": limit,
                },
                decode,
            )
            .db()?
            .collect(),
    };
    rows.db()
}
