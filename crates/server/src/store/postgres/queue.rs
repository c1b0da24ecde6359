//! The task queue on the Postgres store: same pool, same schema search path as the checkpoints.
//!
//! A claim is one statement (`FOR UPDATE SKIP LOCKED` + `UPDATE ... RETURNING`, see
//! [`queue_sql::CLAIM`]) that mirrors [`rules::claim`] in SQL, so concurrent claimers skip each
//! other's rows instead of queueing. Every other transition is one short transaction: the row
//! `FOR UPDATE`, [`rules::apply`] in Rust, and a write-back fenced on the attempt it read.
//! Time is always the caller's `now`, never the database clock.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::PostgresStore;
use super::error::db;
use super::queue_sql;
use super::task_row::{TaskParams, decode, signed, stored_time};
use crate::domain::Tenant;
use crate::error::{Error, Result};
use crate::queue::{NewTask, Task, TaskId, TaskQueue, TaskState, Transition, rules};

/// How often enqueue retries when its key's holder vanished between the insert and the read;
/// tasks are never deleted, so a second round only happens if an operator deletes rows.
const ENQUEUE_ROUNDS: usize = 3;

#[async_trait]
impl TaskQueue for PostgresStore {
    async fn enqueue(&self, tenant: &Tenant, task: NewTask) -> Result<(Task, bool)> {
        // The trait gives enqueue no `now`; like SQLite, the service's clock stamps the task.
        let task = Task::new(task, SystemTime::now());
        let params = TaskParams::new(tenant, &task)?;
        let client = self.client().await?;
        let (insert, by_key) = tokio::try_join!(
            client.prepare_cached(queue_sql::INSERT_TASK),
            client.prepare_cached(queue_sql::TASK_BY_KEY),
        )
        .map_err(db)?;
        for _ in 0..ENQUEUE_ROUNDS {
            if let Some(row) = client
                .query_opt(&insert, &params.insert())
                .await
                .map_err(db)?
            {
                return Ok((decode(&row)?, false));
            }
            // ON CONFLICT DO NOTHING waited for any in-flight insert of the key to commit, so
            // this read (a new statement, a new snapshot) sees the row that holds it.
            let key = task.idempotency_key.as_deref();
            if let Some(row) = client
                .query_opt(&by_key, &[&tenant.as_str(), &key])
                .await
                .map_err(db)?
            {
                return Ok((decode(&row)?, true));
            }
        }
        Err(Error::Unavailable(format!(
            "idempotency key {:?} kept changing hands; retry the request",
            task.idempotency_key.as_deref().unwrap_or_default()
        )))
    }

    async fn claim(
        &self,
        tenant: &Tenant,
        worker: &str,
        lease: Duration,
        batch: usize,
        now: SystemTime,
    ) -> Result<Vec<Task>> {
        if batch == 0 {
            return Ok(Vec::new());
        }
        // The lease end the rules would set, from the caller's exact `now`, then stored.
        let expires = stored_time(rules::later(now, lease));
        let now = stored_time(now);
        let batch = i64::try_from(batch).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let statement = client.prepare_cached(queue_sql::CLAIM).await.map_err(db)?;
        client
            .query(
                &statement,
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
        match transition_locked(&tx, tenant, id, transition, now).await {
            Ok(task) => {
                tx.commit().await.map_err(db)?;
                Ok(task)
            }
            Err(refused) => {
                // Awaited, so the row lock is gone before the caller hears the answer. A
                // rollback that fails too means the connection, and with it the transaction,
                // is gone; the first error is the one worth reporting.
                let _ = tx.rollback().await;
                Err(refused)
            }
        }
    }

    async fn get(&self, tenant: &Tenant, id: &TaskId) -> Result<Option<Task>> {
        let client = self.client().await?;
        let statement = client.prepare_cached(queue_sql::TASK).await.map_err(db)?;
        client
            .query_opt(&statement, &[&tenant.as_str(), &id.as_str()])
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
                let statement = client
                    .prepare_cached(queue_sql::LIST_TASKS)
                    .await
                    .map_err(db)?;
                client
                    .query(&statement, &[&tenant.as_str(), &after, &limit])
                    .await
            }
            Some(state) => {
                let statement = client
                    .prepare_cached(queue_sql::LIST_TASKS_IN_STATE)
                    .await
                    .map_err(db)?;
                client
                    .query(
                        &statement,
                        &[&tenant.as_str(), &after, &limit, &state.as_str()],
                    )
                    .await
            }
        };
        rows.map_err(db)?.iter().map(decode).collect()
    }

    async fn depth(&self) -> Result<Vec<(TaskState, u64)>> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached("SELECT state, count(*) FROM tasks GROUP BY state")
            .await
            .map_err(db)?;
        let rows = client.query(&statement, &[]).await.map_err(db)?;
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
    tx: &deadpool_postgres::Transaction<'_>,
    tenant: &Tenant,
    id: &TaskId,
    transition: Transition,
    now: SystemTime,
) -> Result<Task> {
    let (lock, store) = tokio::try_join!(
        tx.prepare_cached(queue_sql::LOCK_TASK),
        tx.prepare_cached(queue_sql::STORE_TASK),
    )
    .map_err(db)?;
    let row = tx
        .query_opt(&lock, &[&tenant.as_str(), &id.as_str()])
        .await
        .map_err(db)?
        .ok_or_else(|| Error::NotFound(format!("task {id} not found")))?;
    let task = decode(&row)?;
    let next = rules::apply(&task, transition, now)?;
    let fence = signed(task.attempt)?;
    let params = TaskParams::new(tenant, &next)?;
    // Under the row lock the fence cannot fail; it is kept so that the write is correct on its
    // own (contract 5: zero rows updated means the lease was lost).
    let row = tx
        .query_opt(&store, &params.update(&fence))
        .await
        .map_err(db)?
        .ok_or_else(|| {
            Error::FailedPrecondition(format!(
                "lease lost: task {id} is no longer at attempt {}",
                task.attempt
            ))
        })?;
    decode(&row)
}
