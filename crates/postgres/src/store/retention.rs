//! Retention and scrub primitives: run policies, pins, fenced batch deletes, keyset listings.
//!
//! The decisions live in [`checkpointd_core::retention`]; these only read facts and delete what
//! they are told, each in one short statement or transaction.

use std::time::SystemTime;

use super::PostgresStore;
use super::rows::unsigned;
use crate::error::db;
use checkpointd_core::domain::{Epoch, RunId, RunKey, Step, Tenant};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::retention::CheckpointFacts;
use checkpointd_storage::store::{CheckpointRef, RetentionFacts};

const SET_RETENTION: &str = "\
INSERT INTO runs (tenant, run_id, retention) VALUES ($1, $2, $3)
ON CONFLICT (tenant, run_id) DO UPDATE SET retention = excluded.retention";

const PIN_STEP: &str = "\
INSERT INTO checkpoint_pins (tenant, run_id, step, source)
SELECT tenant, run_id, step, $4 FROM checkpoints
 WHERE tenant = $1 AND run_id = $2 AND step = $3
ON CONFLICT DO NOTHING";

const STEP_EXISTS: &str =
    "SELECT 1 FROM checkpoints WHERE tenant = $1 AND run_id = $2 AND step = $3";

const PIN_LATEST: &str = "\
WITH latest AS (
    SELECT step FROM checkpoints
     WHERE tenant = $1 AND run_id = $2 AND quarantine_reason IS NULL
     ORDER BY step DESC LIMIT 1
), pinned AS (
    INSERT INTO checkpoint_pins (tenant, run_id, step, source)
    SELECT $1, $2, step, $3 FROM latest
    ON CONFLICT DO NOTHING
)
SELECT step FROM latest";

const UNPIN: &str = "\
DELETE FROM checkpoint_pins
 WHERE tenant = $1 AND run_id = $2 AND ($3::text IS NULL OR source = $3)
   AND ($4::bigint IS NULL OR step = $4)";

const RUN_RETENTION: &str = "SELECT epoch, retention FROM runs WHERE tenant = $1 AND run_id = $2";

const CHECKPOINT_FACTS: &str = "\
SELECT c.step, c.created_at, c.quarantine_reason IS NOT NULL,
       ARRAY(SELECT p.source FROM checkpoint_pins p
              WHERE p.tenant = c.tenant AND p.run_id = c.run_id AND p.step = c.step
              ORDER BY p.source)
  FROM checkpoints c WHERE c.tenant = $1 AND c.run_id = $2 ORDER BY c.step";

/// A keyset page of runs; ('', '') sorts before every run, as ids are never empty.
const RUNS_AFTER: &str = "\
SELECT tenant, run_id FROM runs
 WHERE (tenant, run_id) > ($1, $2) AND (NOT $4 OR retention IS NOT NULL)
 ORDER BY tenant, run_id LIMIT $3";

const LOCK_EPOCH: &str = "SELECT epoch FROM runs WHERE tenant = $1 AND run_id = $2 FOR UPDATE";

/// Deletes the listed steps except pinned ones and anything at or above the latest
/// non-quarantined step; the run row is locked by `LOCK_EPOCH` first.
const PRUNE: &str = "\
DELETE FROM checkpoints c
 WHERE c.tenant = $1 AND c.run_id = $2 AND c.step = ANY($3)
   AND c.step < (SELECT max(step) FROM checkpoints
                  WHERE tenant = $1 AND run_id = $2 AND quarantine_reason IS NULL)
   AND NOT EXISTS (SELECT 1 FROM checkpoint_pins p
                    WHERE p.tenant = c.tenant AND p.run_id = c.run_id AND p.step = c.step)";

/// Keyset pages of checkpoint addresses: the whole store, or one tenant; `$N` after the start.
const CHECKPOINTS_FIRST: &str = "\
SELECT tenant, run_id, step FROM checkpoints ORDER BY tenant, run_id, step LIMIT $1";
const CHECKPOINTS_AFTER: &str = "\
SELECT tenant, run_id, step FROM checkpoints WHERE (tenant, run_id, step) > ($1, $2, $3)
 ORDER BY tenant, run_id, step LIMIT $4";
const TENANT_CHECKPOINTS_FIRST: &str = "\
SELECT tenant, run_id, step FROM checkpoints WHERE tenant = $1
 ORDER BY run_id, step LIMIT $2";
const TENANT_CHECKPOINTS_AFTER: &str = "\
SELECT tenant, run_id, step FROM checkpoints WHERE tenant = $1 AND (run_id, step) > ($2, $3)
 ORDER BY run_id, step LIMIT $4";

fn limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

fn run_key(tenant: &str, run_id: &str) -> Result<RunKey> {
    Ok(RunKey::new(Tenant::parse(tenant)?, RunId::parse(run_id)?))
}

impl PostgresStore {
    pub(super) async fn store_retention(&self, run: &RunKey, policy: Option<&str>) -> Result<()> {
        let client = self.client().await?;
        self.statements
            .execute(
                &client,
                SET_RETENTION,
                &[&run.tenant.as_str(), &run.run_id.as_str(), &policy],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    pub(super) async fn add_pin(
        &self,
        run: &RunKey,
        step: Option<Step>,
        source: &str,
    ) -> Result<Option<Step>> {
        let client = self.client().await?;
        let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
        let Some(step) = step else {
            let row = self
                .statements
                .query_opt(&client, PIN_LATEST, &[&tenant, &run_id, &source])
                .await
                .map_err(db)?;
            return Ok(row.map(|row| Step::new(unsigned(row.get(0)))));
        };
        let at = step.as_i64();
        let inserted = self
            .statements
            .execute(&client, PIN_STEP, &[&tenant, &run_id, &at, &source])
            .await
            .map_err(db)?;
        // Zero rows is either "already pinned by this source" or "no such checkpoint".
        if inserted == 0
            && self
                .statements
                .query_opt(&client, STEP_EXISTS, &[&tenant, &run_id, &at])
                .await
                .map_err(db)?
                .is_none()
        {
            return Err(Error::checkpoint_not_found(&run.run_id, step.get()));
        }
        Ok(Some(step))
    }

    pub(super) async fn remove_pins(
        &self,
        run: &RunKey,
        step: Option<Step>,
        source: Option<&str>,
    ) -> Result<u64> {
        let client = self.client().await?;
        let step = step.map(Step::as_i64);
        self.statements
            .execute(
                &client,
                UNPIN,
                &[&run.tenant.as_str(), &run.run_id.as_str(), &source, &step],
            )
            .await
            .map_err(db)
    }

    pub(super) async fn read_retention_facts(
        &self,
        run: &RunKey,
    ) -> Result<Option<RetentionFacts>> {
        let mut client = self.client().await?;
        // REPEATABLE READ: the run row and its checkpoints come from one snapshot.
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(db)?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
            [&run.tenant.as_str(), &run.run_id.as_str()];
        let Some(head) = self
            .statements
            .query_opt(&tx, RUN_RETENTION, &params)
            .await
            .map_err(db)?
        else {
            return Ok(None);
        };
        let rows = self
            .statements
            .query(&tx, CHECKPOINT_FACTS, &params)
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        let checkpoints = rows
            .iter()
            .map(|row| CheckpointFacts {
                step: Step::new(unsigned(row.get(0))),
                created_at: row.get::<_, SystemTime>(1),
                quarantined: row.get(2),
                pinned_by: row.get(3),
            })
            .collect();
        Ok(Some(RetentionFacts {
            epoch: Epoch::new(unsigned(head.get(0))),
            policy: head.get(1),
            checkpoints,
        }))
    }

    pub(super) async fn run_keys_after(
        &self,
        after: Option<&RunKey>,
        count: usize,
        with_policy_only: bool,
    ) -> Result<Vec<RunKey>> {
        let client = self.client().await?;
        let (tenant, run_id) =
            after.map_or(("", ""), |run| (run.tenant.as_str(), run.run_id.as_str()));
        let rows = self
            .statements
            .query(
                &client,
                RUNS_AFTER,
                &[&tenant, &run_id, &limit(count), &with_policy_only],
            )
            .await
            .map_err(db)?;
        rows.iter()
            .map(|row| run_key(row.get(0), row.get(1)))
            .collect()
    }

    pub(super) async fn delete_checkpoints(
        &self,
        run: &RunKey,
        epoch: Epoch,
        steps: &[Step],
    ) -> Result<u64> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
        // Locking the run row serialises the delete with Resume's epoch bump and with Saves.
        let locked = self
            .statements
            .query_opt(&tx, LOCK_EPOCH, &[&tenant, &run_id])
            .await
            .map_err(db)?;
        let current = locked.map(|row| Epoch::new(unsigned(row.get(0))));
        if let Err(moved) = epoch.check_unmoved(run, current) {
            tx.rollback().await.map_err(db)?;
            return Err(moved);
        }
        let steps: Vec<i64> = steps.iter().map(|step| step.as_i64()).collect();
        let deleted = self
            .statements
            .execute(&tx, PRUNE, &[&tenant, &run_id, &steps])
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(deleted)
    }

    pub(super) async fn checkpoint_refs_after(
        &self,
        tenant: Option<&Tenant>,
        after: Option<&CheckpointRef>,
        count: usize,
    ) -> Result<Vec<CheckpointRef>> {
        let client = self.client().await?;
        let count = limit(count);
        let rows = match (tenant, after) {
            (None, None) => {
                self.statements
                    .query(&client, CHECKPOINTS_FIRST, &[&count])
                    .await
            }
            (None, Some(at)) => {
                let step = at.step.as_i64();
                let (t, r) = (at.run.tenant.as_str(), at.run.run_id.as_str());
                self.statements
                    .query(&client, CHECKPOINTS_AFTER, &[&t, &r, &step, &count])
                    .await
            }
            (Some(tenant), None) => {
                self.statements
                    .query(
                        &client,
                        TENANT_CHECKPOINTS_FIRST,
                        &[&tenant.as_str(), &count],
                    )
                    .await
            }
            (Some(tenant), Some(at)) => {
                let step = at.step.as_i64();
                let r = at.run.run_id.as_str();
                self.statements
                    .query(
                        &client,
                        TENANT_CHECKPOINTS_AFTER,
                        &[&tenant.as_str(), &r, &step, &count],
                    )
                    .await
            }
        }
        .map_err(db)?;
        rows.iter()
            .map(|row| {
                Ok(CheckpointRef {
                    run: run_key(row.get(0), row.get(1))?,
                    step: Step::new(unsigned(row.get(2))),
                })
            })
            .collect()
    }
}
