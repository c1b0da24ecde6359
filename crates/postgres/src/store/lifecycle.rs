//! Run lifecycle writes: resume (epoch bump), rewind, quarantine, and deletes of a run or of
//! chosen checkpoints.

use std::time::SystemTime;

use deadpool_postgres::Transaction;
use tokio_postgres::types::ToSql;

use super::head_cache::CachedRun;
use super::rows::{RunRow, signed, unsigned};
use super::sql;
use super::{Locked, PostgresStore};
use crate::error::db;
use crate::notifications::record_event;
use crate::statements::Statements;
use checkpointd_core::domain::{Epoch, MessageChain, RunKey, Step};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::notify::quarantine_event;
use checkpointd_core::plan::RunHead;
use checkpointd_storage::store::DeletedCheckpoints;

impl PostgresStore {
    /// One upsert: creating the run and bumping its epoch is atomic, so two concurrent resumes
    /// get two different epochs.
    pub(super) async fn bump_epoch(&self, run: &RunKey) -> Result<Epoch> {
        let client = self.client().await?;
        let statement = self
            .statements
            .prepare(&client, sql::BEGIN_RESUME)
            .await
            .map_err(db)?;
        let row = statement
            .query_one(&client, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?;
        let RunRow { head, updated_at } = RunRow::decode(&row, run)?;
        // The latest step is unknown here (another instance may have saved since our cache
        // entry); the rewind that follows a resume reads it under the lock.
        self.cache.put(
            run,
            CachedRun {
                head,
                updated_at,
                latest_step: None,
            },
        );
        Ok(head.epoch)
    }

    pub(super) async fn truncate_log(
        &self,
        run: &RunKey,
        epoch: Epoch,
        chain: MessageChain,
    ) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let outcome = rewind_under_lock(&self.statements, &tx, run, epoch, chain).await;
        self.finish(tx, run, outcome).await
    }

    pub(super) async fn mark_quarantined(
        &self,
        run: &RunKey,
        step: Step,
        reason: &str,
    ) -> Result<()> {
        // The event goes through the outbox's one writer (`record_event`), in the quarantine's
        // transaction: only a first quarantine (one row updated) is told.
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let statement = self
            .statements
            .prepare(&tx, sql::QUARANTINE)
            .await
            .map_err(db)?;
        let now = SystemTime::now();
        let quarantined = statement
            .execute(
                &tx,
                &[
                    &run.tenant.as_str(),
                    &run.run_id.as_str(),
                    &step.as_i64(),
                    &reason,
                    &now,
                ],
            )
            .await
            .map_err(db)?;
        if quarantined > 0 {
            let event = quarantine_event(run, step, reason, now);
            record_event(&self.statements, &tx, &event).await?;
        }
        tx.commit().await.map_err(db)
    }

    /// Deletes every row of the run in one transaction; the run row goes first, which waits for
    /// any writer holding it.
    pub(super) async fn remove_run(&self, run: &RunKey) -> Result<u64> {
        self.cache.forget(run);
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let outcome = delete_under_lock(&self.statements, &tx, run).await;
        let deleted = self.finish(tx, run, outcome).await;
        // Again after the commit: a write that finished meanwhile may have cached the run.
        self.cache.forget(run);
        deleted
    }
}

impl PostgresStore {
    /// Deletes the listed, unpinned checkpoints under the run lock; see
    /// [`checkpointd_storage::store::CheckpointStore::delete_checkpoints`].
    pub(super) async fn remove_checkpoints(
        &self,
        run: &RunKey,
        epoch: Option<Epoch>,
        steps: &[Step],
    ) -> Result<DeletedCheckpoints> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let outcome = delete_listed_under_lock(&self.statements, &tx, run, epoch, steps).await;
        self.finish(tx, run, outcome).await
    }
}

async fn delete_listed_under_lock(
    statements: &Statements,
    tx: &Transaction<'_>,
    run: &RunKey,
    epoch: Option<Epoch>,
    steps: &[Step],
) -> Result<Locked<DeletedCheckpoints>> {
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let lock = statements.prepare(tx, sql::LOCK_RUN).await.map_err(db)?;
    let Some(locked) = lock.query_opt(tx, &[&tenant, &run_id]).await.map_err(db)? else {
        return Ok(Locked::Release(
            Err(Error::run_not_found(&run.run_id)),
            None,
        ));
    };
    let locked = RunRow::decode(&locked, run)?;
    if let Some(epoch) = epoch
        && let Err(error) = epoch.check_write(locked.head.epoch)
    {
        return Ok(Locked::Release(Err(error), None));
    }
    let mut listed: Vec<i64> = steps.iter().map(|step| step.as_i64()).collect();
    listed.sort_unstable();
    listed.dedup();
    let (delete, pinned) = tokio::try_join!(
        statements.prepare(tx, sql::DELETE_LISTED_CHECKPOINTS),
        statements.prepare(tx, sql::PINNED_LISTED_STEPS),
    )
    .map_err(db)?;
    let deleted = delete
        .execute(tx, &[&tenant, &run_id, &listed])
        .await
        .map_err(db)?;
    let pinned = pinned
        .query(tx, &[&tenant, &run_id, &listed])
        .await
        .map_err(db)?
        .iter()
        .map(|row| Step::new(unsigned(row.get(0))))
        .collect();
    let outcome = DeletedCheckpoints { deleted, pinned };
    if deleted == 0 {
        return Ok(Locked::Release(Ok(outcome), None));
    }
    let bump = statements
        .prepare(tx, sql::BUMP_RUN_VERSION)
        .await
        .map_err(db)?;
    let bumped = bump.query_one(tx, &[&tenant, &run_id]).await.map_err(db)?;
    Ok(Locked::Commit(
        outcome,
        Some(CachedRun {
            head: locked.head,
            updated_at: bumped.get(0),
            // Not read: the next Save takes the locked path once and learns it.
            latest_step: None,
        }),
    ))
}

async fn rewind_under_lock(
    statements: &Statements,
    tx: &Transaction<'_>,
    run: &RunKey,
    epoch: Epoch,
    chain: MessageChain,
) -> Result<Locked<()>> {
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let (lock, truncate, set_head, latest_step) = tokio::try_join!(
        statements.prepare(tx, sql::LOCK_RUN),
        statements.prepare(tx, sql::TRUNCATE_MESSAGES),
        statements.prepare(tx, sql::SET_MESSAGE_HEAD),
        statements.prepare(tx, sql::LATEST_STEP),
    )
    .map_err(db)?;
    let Some(locked) = lock.query_opt(tx, &[&tenant, &run_id]).await.map_err(db)? else {
        return Ok(Locked::Release(
            Err(Error::run_not_found(&run.run_id)),
            None,
        ));
    };
    let locked = RunRow::decode(&locked, run)?;
    if let Err(error) = epoch.check_write(locked.head.epoch) {
        return Ok(Locked::Release(Err(error), None));
    }
    let len = signed(chain.len);
    let head = chain.head.as_slice();
    let run_params: [&(dyn ToSql + Sync); 2] = [&tenant, &run_id];
    let truncate_params: [&(dyn ToSql + Sync); 3] = [&tenant, &run_id, &len];
    let head_params: [&(dyn ToSql + Sync); 4] = [&tenant, &run_id, &len, &head];
    // Statements after the lock see every committed write, so no message appended by an
    // earlier lock holder survives past `len`.
    let (_, updated, latest) = tokio::try_join!(
        truncate.execute(tx, &truncate_params),
        set_head.query_one(tx, &head_params),
        latest_step.query_opt(tx, &run_params),
    )
    .map_err(db)?;
    Ok(Locked::Commit(
        (),
        Some(CachedRun {
            head: RunHead {
                messages: chain,
                ..locked.head
            },
            updated_at: updated.get(0),
            latest_step: Some(latest.map(|row| Step::new(unsigned(row.get(0))))),
        }),
    ))
}

async fn delete_under_lock(
    statements: &Statements,
    tx: &Transaction<'_>,
    run: &RunKey,
) -> Result<Locked<u64>> {
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let (runs, checkpoints, messages, tools, pins, actions) = tokio::try_join!(
        statements.prepare(tx, sql::DELETE_RUN),
        statements.prepare(tx, sql::DELETE_CHECKPOINTS),
        statements.prepare(tx, sql::DELETE_MESSAGES),
        statements.prepare(tx, sql::DELETE_TOOLS),
        statements.prepare(tx, sql::DELETE_PINS),
        statements.prepare(tx, sql::DELETE_JOURNAL_ACTIONS),
    )
    .map_err(db)?;
    let params: [&(dyn ToSql + Sync); 2] = [&tenant, &run_id];
    let (runs, checkpoints, messages, tools, _, _) = tokio::try_join!(
        runs.execute(tx, &params),
        checkpoints.execute(tx, &params),
        messages.execute(tx, &params),
        tools.execute(tx, &params),
        pins.execute(tx, &params),
        actions.execute(tx, &params),
    )
    .map_err(db)?;
    if runs + checkpoints + messages + tools == 0 {
        let absent = Error::run_not_found(&run.run_id);
        return Ok(Locked::Release(Err(absent), None));
    }
    Ok(Locked::Commit(checkpoints, None))
}
