//! The task queue on Postgres: same pool, same schema search path as the checkpoint store.
//!
//! A claim is one statement (`FOR UPDATE SKIP LOCKED` + `UPDATE ... RETURNING`, see
//! [`sql::CLAIM`]) that mirrors [`rules::claimable`] and [`rules::claim`] in SQL, so concurrent
//! claimers skip each other's rows instead of queueing. Every other write is one short
//! transaction: the rows `FOR UPDATE`, [`rules`] in Rust, and a write-back fenced on the
//! attempt it read. Time is always the caller's `now`, never the database clock.

#[cfg(test)]
mod migration_tests;
mod sql;
mod task_row;
#[cfg(test)]
pub(super) mod tests;
mod waiting;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use deadpool_postgres::Transaction;

use self::task_row::{TaskParams, decode, signed};
use crate::PostgresStore;
use crate::error::db;
use crate::notifications::record_event;
use crate::statements::{Prepared, Statements};
use crate::tenant_scans::by_tenant;
use checkpointd_core::domain::{Attempt, Tenant};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::notify::task_event;
use checkpointd_core::time::whole_micros;
use checkpointd_storage::queue::{
    ClaimBatch, NewTask, Task, TaskId, TaskQueue, TaskState, Transition, WaitingPage, WaitingQuery,
    rules,
};

/// The task queue in a [`PostgresStore`]'s database, on the store's pool.
pub struct PostgresQueue {
    db: Arc<PostgresStore>,
}

impl PostgresQueue {
    /// The queue in `db`'s schema; the store's migrations created its table.
    pub fn new(db: Arc<PostgresStore>) -> Self {
        Self { db }
    }

    async fn client(&self) -> Result<deadpool_postgres::Client> {
        self.db.client().await
    }
}

/// Commits a transaction whose work succeeded, or rolls it back. The rollback is awaited, so
/// no row lock outlives the answer the caller hears.
async fn finish<T>(tx: Transaction<'_>, outcome: Result<T>) -> Result<T> {
    match outcome {
        Ok(done) => {
            tx.commit().await.map_err(db)?;
            Ok(done)
        }
        Err(refused) => {
            // A rollback that fails too means the connection, and with it the transaction, is
            // gone; the first error is the one worth reporting.
            let _ = tx.rollback().await;
            Err(refused)
        }
    }
}

/// How often enqueue retries when its key's holder vanished between the insert and the read;
/// tasks are never deleted, so a second round only happens if an operator deletes rows.
const ENQUEUE_ROUNDS: usize = 3;

#[async_trait]
impl TaskQueue for PostgresQueue {
    async fn enqueue(&self, tenant: &Tenant, task: NewTask) -> Result<(Task, bool)> {
        // The trait gives enqueue no `now`; like SQLite, the service's clock stamps the task.
        let task = Task::new(task, SystemTime::now());
        let params = TaskParams::new(tenant, &task)?;
        let client = self.client().await?;
        let (insert, by_key) = tokio::try_join!(
            self.db.statements.prepare(&client, sql::INSERT_TASK),
            self.db.statements.prepare(&client, sql::TASK_BY_KEY),
        )
        .map_err(db)?;
        for _ in 0..ENQUEUE_ROUNDS {
            if let Some(row) = insert
                .query_opt(&client, &params.insert())
                .await
                .map_err(db)?
            {
                return Ok((decode(&row)?, false));
            }
            // ON CONFLICT DO NOTHING waited for any in-flight insert of the key to commit, so
            // this read (a new statement, a new snapshot) sees the row that holds it.
            let key = task.idempotency_key.as_deref();
            if let Some(row) = by_key
                .query_opt(&client, &[&tenant.as_str(), &key])
                .await
                .map_err(db)?
            {
                return Ok((decode(&row)?, true));
            }
        }
        Err(Error::unavailable(format!(
            "idempotency key {:?} kept changing hands; retry the request",
            task.idempotency_key.as_deref().unwrap_or_default()
        )))
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
        // The lease end the rules would set, from the caller's exact `now`, then stored.
        let expires = whole_micros(rules::later(now, lease));
        let now = whole_micros(now);
        let batch = i64::from(batch.get());
        let client = self.client().await?;
        let statement = self
            .db
            .statements
            .prepare(&client, sql::CLAIM)
            .await
            .map_err(db)?;
        statement
            .query(
                &client,
                &[&tenant.as_str(), &now, &batch, &worker, &expires],
            )
            .await
            .map_err(db)?
            .iter()
            .map(decode)
            .collect()
    }

    async fn update(
        &self,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let outcome =
            transition_locked(&self.db.statements, &tx, tenant, id, transition, now).await;
        finish(tx, outcome).await
    }

    async fn reap_exhausted(&self, now: SystemTime, limit: usize) -> Result<u64> {
        if limit == 0 {
            return Ok(0);
        }
        let mut client = self.client().await?;
        let picked = self
            .db
            .statements
            .query(
                &client,
                sql::REAP_CANDIDATES,
                &[
                    &whole_micros(now),
                    &i64::try_from(limit).unwrap_or(i64::MAX),
                ],
            )
            .await
            .map_err(db)?;
        // One short transaction per tenant: its rows are locked, reaped and committed together,
        // and never with another tenant's.
        let mut reaped = 0;
        for (tenant, ids) in by_tenant(&picked)? {
            let tx = client.transaction().await.map_err(db)?;
            let left = limit.saturating_sub(reaped as usize);
            let outcome = reap_locked(&self.db.statements, &tx, &tenant, &ids, now, left).await;
            reaped += finish(tx, outcome).await?;
        }
        Ok(reaped)
    }

    async fn get(&self, tenant: &Tenant, id: &TaskId) -> Result<Option<Task>> {
        let client = self.client().await?;
        let statement = self
            .db
            .statements
            .prepare(&client, sql::TASK)
            .await
            .map_err(db)?;
        statement
            .query_opt(&client, &[&tenant.as_str(), &id.as_str()])
            .await
            .map_err(db)?
            .as_ref()
            .map(decode)
            .transpose()
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
        let after = after.map_or("", TaskId::as_str);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = match state {
            None => {
                let statement = self
                    .db
                    .statements
                    .prepare(&client, sql::LIST_TASKS)
                    .await
                    .map_err(db)?;
                statement
                    .query(&client, &[&tenant.as_str(), &after, &limit])
                    .await
            }
            Some(state) => {
                let statement = self
                    .db
                    .statements
                    .prepare(&client, sql::LIST_TASKS_IN_STATE)
                    .await
                    .map_err(db)?;
                statement
                    .query(
                        &client,
                        &[&tenant.as_str(), &after, &limit, &state.as_str()],
                    )
                    .await
            }
        };
        rows.map_err(db)?.iter().map(decode).collect()
    }

    async fn list_waiting(&self, tenant: &Tenant, query: &WaitingQuery) -> Result<WaitingPage> {
        waiting::list_waiting(&self.db, tenant, query).await
    }

    async fn depth(&self) -> Result<Vec<(TaskState, u64)>> {
        let client = self.client().await?;
        let statement = self
            .db
            .statements
            .prepare(&client, "SELECT state, count(*) FROM tasks GROUP BY state")
            .await
            .map_err(db)?;
        let rows = statement.query(&client, &[]).await.map_err(db)?;
        rows.iter()
            .map(|row| {
                let state: &str = row.try_get(0).map_err(db)?;
                let count: i64 = row.try_get(1).map_err(db)?;
                Ok((TaskState::parse(state)?, count.max(0) as u64))
            })
            .collect()
    }
}

/// Reads the task under a row lock, applies the transition and writes the outcome back fenced
/// on the attempt it read. Any error leaves the caller to roll back, so nothing changes.
async fn transition_locked(
    statements: &Statements,
    tx: &Transaction<'_>,
    tenant: &Tenant,
    id: &TaskId,
    transition: Transition,
    now: SystemTime,
) -> Result<Task> {
    let (lock, store) = tokio::try_join!(
        statements.prepare(tx, sql::LOCK_TASK),
        statements.prepare(tx, sql::STORE_TASK),
    )
    .map_err(db)?;
    let row = lock
        .query_opt(tx, &[&tenant.as_str(), &id.as_str()])
        .await
        .map_err(db)?
        .ok_or_else(|| Error::task_not_found(id))?;
    let task = decode(&row)?;
    let next = rules::apply(&task, transition, now)?;
    let stored = store_locked(tx, &store, tenant, task.attempt, &next).await?;
    // The event is committed with the transition or not at all (contract 12).
    if let Some(event) = task_event(tenant, &task, &stored, now) {
        record_event(statements, tx, &event).await?;
    }
    Ok(stored)
}

/// Locks those of the tenant's picked tasks `ids` still reapable (skipping rows another
/// writer holds), buries up to `limit` of them by the rules and writes each back. Reaping is
/// rare and off the hot path, so a round trip per task buys keeping the decision in Rust.
async fn reap_locked(
    statements: &Statements,
    tx: &Transaction<'_>,
    tenant: &Tenant,
    ids: &[String],
    now: SystemTime,
    limit: usize,
) -> Result<u64> {
    let (lock, store) = tokio::try_join!(
        statements.prepare(tx, sql::LOCK_REAPABLE),
        statements.prepare(tx, sql::STORE_TASK),
    )
    .map_err(db)?;
    let stale = lock
        .query(tx, &[&tenant.as_str(), &ids, &whole_micros(now)])
        .await
        .map_err(db)?
        .iter()
        .map(decode)
        .collect::<Result<Vec<Task>>>()?;
    let doomed = rules::select_reaps(stale, now, limit);
    for task in &doomed {
        let buried =
            store_locked(tx, &store, tenant, task.attempt, &rules::reap(task, now)).await?;
        if let Some(event) = task_event(tenant, task, &buried, now) {
            record_event(statements, tx, &event).await?;
        }
    }
    Ok(doomed.len() as u64)
}

/// Writes a task's outcome back, fenced on the attempt it was read at, and returns the row as
/// stored. Under the row lock the fence cannot fail; it is kept so that the write is correct
/// on its own (contract 5: zero rows updated means the lease was lost).
async fn store_locked(
    tx: &Transaction<'_>,
    store: &Prepared,
    tenant: &Tenant,
    fence: Attempt,
    task: &Task,
) -> Result<Task> {
    let params = TaskParams::new(tenant, task)?;
    let fence_param = signed(fence)?;
    let row = store
        .query_opt(tx, &params.update(&fence_param))
        .await
        .map_err(db)?
        .ok_or_else(|| {
            Error::LeaseLost(format!(
                "lease lost: task {} is no longer at attempt {fence}",
                task.id
            ))
        })?;
    decode(&row)
}
