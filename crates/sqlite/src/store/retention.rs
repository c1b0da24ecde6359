//! Retention and scrub primitives: run policies, pins, fenced batch deletes, keyset listings.
//!
//! The decisions live in [`checkpointd_core::retention`]; these only read facts and delete what
//! they are told, each in one short transaction.

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::{read, write};
use crate::codec::{self, optional_text, signed, text, unsigned};
use crate::error::DbResultExt;
use checkpointd_core::domain::{Epoch, RunId, RunKey, Step, Tenant};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::RunHead;
use checkpointd_core::retention::CheckpointFacts;
use checkpointd_storage::store::{CheckpointRef, RetentionFacts};

fn limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// Sets the run's policy, creating an empty run when there is none yet.
pub(super) fn set_retention(
    conn: &mut Connection,
    run: &RunKey,
    policy: Option<&str>,
) -> Result<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    if read::run_head(&tx, run)?.is_none() {
        write::upsert_run(&tx, run, &RunHead::NEW, codec::now().1)?;
    }
    tx.prepare_cached("UPDATE runs SET retention = ?3 WHERE tenant = ?1 AND run_id = ?2")
        .db()?
        .execute(params![run.tenant.as_str(), run.run_id.as_str(), policy])
        .db()?;
    tx.commit().db()
}

pub(super) fn pin(
    conn: &mut Connection,
    run: &RunKey,
    step: Option<Step>,
    source: &str,
) -> Result<Option<Step>> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let target = match step {
        Some(step) => {
            let at = signed(step.get(), "step")?;
            let exists = tx
                .prepare_cached(
                    "SELECT 1 FROM checkpoints WHERE tenant = ?1 AND run_id = ?2 AND step = ?3",
                )
                .db()?
                .exists(params![tenant, run_id, at])
                .db()?;
            if !exists {
                return Err(Error::checkpoint_not_found(&run.run_id, step.get()));
            }
            step
        }
        None => {
            let latest = tx
                .prepare_cached(
                    "SELECT step FROM checkpoints
                      WHERE tenant = ?1 AND run_id = ?2 AND quarantine_reason IS NULL
                      ORDER BY step DESC LIMIT 1",
                )
                .db()?
                .query_row(params![tenant, run_id], |row| unsigned(row, 0))
                .optional()
                .db()?;
            match latest {
                Some(step) => Step::new(step),
                None => return Ok(None),
            }
        }
    };
    tx.prepare_cached(
        "INSERT INTO checkpoint_pins (tenant, run_id, step, source, pinned_at)
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
    )
    .db()?
    .execute(params![
        tenant,
        run_id,
        signed(target.get(), "step")?,
        source,
        codec::now().1
    ])
    .db()?;
    tx.commit().db()?;
    Ok(Some(target))
}

pub(super) fn unpin(
    conn: &mut Connection,
    run: &RunKey,
    step: Option<Step>,
    source: Option<&str>,
) -> Result<u64> {
    let step = step.map(|step| signed(step.get(), "step")).transpose()?;
    let removed = conn
        .prepare_cached(
            "DELETE FROM checkpoint_pins
              WHERE tenant = ?1 AND run_id = ?2 AND (?3 IS NULL OR source = ?3)
                AND (?4 IS NULL OR step = ?4)",
        )
        .db()?
        .execute(params![
            run.tenant.as_str(),
            run.run_id.as_str(),
            source,
            step
        ])
        .db()?;
    Ok(removed as u64)
}

pub(super) fn retention_facts(
    conn: &mut Connection,
    run: &RunKey,
) -> Result<Option<RetentionFacts>> {
    // One read transaction: the run row and its checkpoints come from one snapshot.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Deferred)
        .db()?;
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let head = tx
        .prepare_cached("SELECT epoch, retention FROM runs WHERE tenant = ?1 AND run_id = ?2")
        .db()?
        .query_row(params![tenant, run_id], |row| {
            Ok((unsigned(row, 0)?, optional_text(row, 1)?))
        })
        .optional()
        .db()?;
    let Some((epoch, policy)) = head else {
        return Ok(None);
    };
    let mut statement = tx
        .prepare_cached(
            // Sources are `operator` or `approval:TASK_ID`: never a newline, so it separates them.
            "SELECT c.step, c.created_at, c.quarantine_reason IS NOT NULL,
                    (SELECT group_concat(source, char(10)) FROM
                        (SELECT p.source FROM checkpoint_pins p
                          WHERE p.tenant = c.tenant AND p.run_id = c.run_id
                            AND p.step = c.step ORDER BY p.source))
               FROM checkpoints c WHERE c.tenant = ?1 AND c.run_id = ?2 ORDER BY c.step",
        )
        .db()?;
    let checkpoints = statement
        .query_map(params![tenant, run_id], |row| {
            Ok(CheckpointFacts {
                step: Step::new(unsigned(row, 0)?),
                created_at: codec::from_micros(row.get(1)?),
                quarantined: row.get(2)?,
                pinned_by: row
                    .get::<_, Option<String>>(3)?
                    .map(|sources| sources.split('\n').map(str::to_owned).collect())
                    .unwrap_or_default(),
            })
        })
        .db()?
        .collect::<rusqlite::Result<Vec<_>>>()
        .db()?;
    Ok(Some(RetentionFacts {
        epoch: Epoch::new(epoch),
        policy,
        checkpoints,
    }))
}

fn run_key(row: &Row<'_>) -> rusqlite::Result<std::result::Result<RunKey, Error>> {
    let (tenant, run_id) = (text(row, 0)?, text(row, 1)?);
    Ok(Tenant::parse(&tenant).and_then(|tenant| Ok(RunKey::new(tenant, RunId::parse(&run_id)?))))
}

pub(super) fn runs_after(
    conn: &Connection,
    after: Option<&RunKey>,
    count: usize,
    with_policy_only: bool,
) -> Result<Vec<RunKey>> {
    let (tenant, run_id) = match after {
        Some(run) => (run.tenant.as_str(), run.run_id.as_str()),
        // Every tenant and run id is non-empty, so ("", "") sorts before all of them.
        None => ("", ""),
    };
    let mut statement = conn
        .prepare_cached(
            "SELECT tenant, run_id FROM runs
              WHERE (tenant, run_id) > (?1, ?2) AND (?4 = 0 OR retention IS NOT NULL)
              ORDER BY tenant, run_id LIMIT ?3",
        )
        .db()?;
    let rows = statement
        .query_map(
            params![tenant, run_id, limit(count), with_policy_only],
            run_key,
        )
        .db()?
        .collect::<rusqlite::Result<Vec<_>>>()
        .db()?;
    rows.into_iter().collect()
}

/// Deletes the listed steps in one IMMEDIATE transaction, fenced on the run's epoch.
pub(super) fn prune(
    conn: &mut Connection,
    run: &RunKey,
    epoch: Epoch,
    steps: &[Step],
) -> Result<u64> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let current = tx
        .prepare_cached("SELECT epoch FROM runs WHERE tenant = ?1 AND run_id = ?2")
        .db()?
        .query_row(params![tenant, run_id], |row| unsigned(row, 0))
        .optional()
        .db()?;
    epoch.check_unmoved(run, current.map(Epoch::new))?;
    let mut deleted = 0;
    {
        let mut delete = tx
            .prepare_cached(
                "DELETE FROM checkpoints
                  WHERE tenant = ?1 AND run_id = ?2 AND step = ?3
                    AND step < (SELECT max(step) FROM checkpoints
                                 WHERE tenant = ?1 AND run_id = ?2
                                   AND quarantine_reason IS NULL)
                    AND NOT EXISTS (SELECT 1 FROM checkpoint_pins p
                                     WHERE p.tenant = ?1 AND p.run_id = ?2 AND p.step = ?3)",
            )
            .db()?;
        for step in steps {
            deleted += delete
                .execute(params![tenant, run_id, signed(step.get(), "step")?])
                .db()?;
        }
    }
    tx.commit().db()?;
    Ok(deleted as u64)
}

pub(super) fn checkpoints_after(
    conn: &Connection,
    tenant: Option<&Tenant>,
    after: Option<&CheckpointRef>,
    count: usize,
) -> Result<Vec<CheckpointRef>> {
    // Steps are never negative, so step -1 sorts before every checkpoint of a run.
    let (after_tenant, after_run, after_step) = match after {
        Some(at) => (
            at.run.tenant.as_str(),
            at.run.run_id.as_str(),
            signed(at.step.get(), "step")?,
        ),
        None => ("", "", -1),
    };
    let map = |row: &Row<'_>| Ok((run_key(row)?, unsigned(row, 2)?));
    let rows = match tenant {
        None => conn
            .prepare_cached(
                "SELECT tenant, run_id, step FROM checkpoints
                  WHERE (tenant, run_id, step) > (?1, ?2, ?3)
                  ORDER BY tenant, run_id, step LIMIT ?4",
            )
            .db()?
            .query_map(
                params![after_tenant, after_run, after_step, limit(count)],
                map,
            )
            .db()?
            .collect::<rusqlite::Result<Vec<_>>>(),
        Some(tenant) => conn
            .prepare_cached(
                "SELECT tenant, run_id, step FROM checkpoints
                  WHERE tenant = ?1 AND (run_id, step) > (?2, ?3)
                  ORDER BY run_id, step LIMIT ?4",
            )
            .db()?
            .query_map(
                params![tenant.as_str(), after_run, after_step, limit(count)],
                map,
            )
            .db()?
            .collect::<rusqlite::Result<Vec<_>>>(),
    }
    .db()?;
    rows.into_iter()
        .map(|(run, step)| {
            Ok(CheckpointRef {
                run: run?,
                step: Step::new(step),
            })
        })
        .collect()
}
