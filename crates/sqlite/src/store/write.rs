//! The write paths. Each runs in one IMMEDIATE transaction on the writer connection: the write
//! lock is taken before the first read, so the context a plan is made from cannot change before
//! the plan is applied, and any error drops the transaction, rolling everything back.

use std::collections::BTreeSet;

use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::read;
use crate::codec::{self, encode_metadata, signed};
use crate::error::DbResultExt;
use crate::notifications::record_event;
use checkpointd_core::domain::{Epoch, MessageChain, NewCheckpoint, RunKey, SavedCheckpoint, Step};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::notify::quarantine_event;
use checkpointd_core::plan::{self, MessageRow, PrefixSource, RunHead, SaveContext, SavePlan};
use checkpointd_storage::store::DeletedCheckpoints;

/// An IMMEDIATE transaction on the writer connection: the write lock before the first read.
pub(super) fn begin(conn: &mut Connection) -> Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .db()
}

/// Save: read the context, plan, apply, commit.
pub(super) fn save(conn: &mut Connection, request: &NewCheckpoint) -> Result<SavedCheckpoint> {
    let run = &request.run;
    let step = signed(request.step.get(), "step")?;
    let tx = begin(conn)?;
    // The common path (a Save continuing the log and covering the whole journal) reads its whole
    // context in this one statement; only an offset inside the log or a shorter tool_count reads
    // one more stored chain value.
    let facts = read::save_facts(&tx, run, step, request.label.as_deref())?;
    let head = facts.head.unwrap_or(RunHead::NEW);
    let prefix = match SaveContext::prefix_source(&head, request.message_offset) {
        PrefixSource::Head => Some(head.messages.head),
        PrefixSource::Empty => Some([0; 32]),
        PrefixSource::Gap => None,
        // An offset this large cannot name a stored message, so it reads as a gap.
        PrefixSource::StoredAt(seq) => match i64::try_from(seq) {
            Ok(seq) => read::message_chain_at(&tx, run, seq)?,
            Err(_) => None,
        },
    };
    let context = SaveContext {
        head,
        existing: facts.existing,
        latest_step: facts.latest_step,
        prefix,
        label_step: facts.label_step,
        tools: SaveContext::covered_tools(&head, request.tool_count, |seq| {
            match i64::try_from(seq) {
                Ok(seq) => read::tool_chain_at(&tx, run, seq),
                // A count this large cannot name a stored entry, so it reads as past the end.
                Err(_) => Ok(None),
            }
        })?,
    };
    let (id, checksum, replace, rows, head, message_count, tool_count) =
        match plan::plan_save(request, &context)? {
            SavePlan::Unchanged(saved) => return Ok(saved),
            SavePlan::Write {
                id,
                checksum,
                replace,
                rows,
                head,
                message_count,
                tool_count,
            } => (id, checksum, replace, rows, head, message_count, tool_count),
        };

    let (created_at, now) = codec::now();
    // The run row goes first: the checkpoint and message rows reference it.
    upsert_run(&tx, run, &head, now)?;
    if replace {
        tx.prepare_cached(
            "DELETE FROM checkpoints WHERE tenant = ?1 AND run_id = ?2 AND step = ?3",
        )
        .db()?
        .execute(params![run.tenant.as_str(), run.run_id.as_str(), step])
        .db()?;
    }
    tx.prepare_cached(
        "INSERT INTO checkpoints (tenant, run_id, step, id, epoch, content_type, metadata,
                                  message_count, tool_count, checksum, created_at,
                                  quarantine_reason, state, label)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, NULL, ?12, ?13)",
    )
    .db()?
    .execute(params![
        run.tenant.as_str(),
        run.run_id.as_str(),
        step,
        id,
        signed(request.epoch.get(), "epoch")?,
        request.content_type,
        encode_metadata(&request.metadata),
        signed(message_count, "message_count")?,
        signed(tool_count, "tool_count")?,
        checksum.as_bytes(),
        now,
        request.state,
        request.label,
    ])
    .db()?;
    insert_messages(&tx, run, &rows)?;
    tx.commit().db()?;
    Ok(SavedCheckpoint {
        id,
        checksum,
        created_at,
        already_existed: false,
        tool_count,
    })
}

fn insert_messages(tx: &Transaction<'_>, run: &RunKey, rows: &[MessageRow]) -> Result<()> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO messages (tenant, run_id, seq, role, chain, content)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .db()?;
    for row in rows {
        insert
            .execute(params![
                run.tenant.as_str(),
                run.run_id.as_str(),
                signed(row.seq, "message seq")?,
                row.message.role,
                row.chain,
                row.message.content,
            ])
            .db()?;
    }
    Ok(())
}

/// Creates the run row or overwrites its head; the epoch is written as planned (unchanged by
/// Save and RecordToolResult, which only check it).
pub(super) fn upsert_run(
    tx: &Transaction<'_>,
    run: &RunKey,
    head: &RunHead,
    now: i64,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO runs (tenant, run_id, epoch, message_count, message_head, tool_count,
                           tool_head, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
         ON CONFLICT (tenant, run_id) DO UPDATE SET
             epoch = excluded.epoch,
             message_count = excluded.message_count,
             message_head = excluded.message_head,
             tool_count = excluded.tool_count,
             tool_head = excluded.tool_head,
             updated_at = excluded.updated_at",
    )
    .db()?
    .execute(params![
        run.tenant.as_str(),
        run.run_id.as_str(),
        signed(head.epoch.get(), "epoch")?,
        signed(head.messages.len, "message_count")?,
        head.messages.head,
        signed(head.tools.len, "tool_count")?,
        head.tools.head,
        now,
    ])
    .db()?;
    Ok(())
}

/// Creates the run if needed and bumps its epoch, in one statement (atomic on its own).
pub(super) fn begin_resume(conn: &mut Connection, run: &RunKey) -> Result<Epoch> {
    let new = RunHead::NEW;
    let epoch: i64 = conn
        .prepare_cached(
            "INSERT INTO runs (tenant, run_id, epoch, message_count, message_head, tool_count,
                               tool_head, created_at, updated_at)
             VALUES (?1, ?2, ?3 + 1, ?4, ?5, ?6, ?7, ?8, ?8)
             ON CONFLICT (tenant, run_id) DO UPDATE SET
                 epoch = epoch + 1,
                 updated_at = excluded.updated_at
             RETURNING epoch",
        )
        .db()?
        .query_row(
            params![
                run.tenant.as_str(),
                run.run_id.as_str(),
                signed(new.epoch.get(), "epoch")?,
                signed(new.messages.len, "message_count")?,
                new.messages.head,
                signed(new.tools.len, "tool_count")?,
                new.tools.head,
                codec::now().1,
            ],
            |row| row.get(0),
        )
        .db()?;
    u64::try_from(epoch)
        .map(Epoch::new)
        .map_err(|_| Error::internal(format!("run epoch is negative: {epoch}")))
}

/// Truncates the message log to `chain.len` and makes `chain` the head, if still at `epoch`.
pub(super) fn rewind(
    conn: &mut Connection,
    run: &RunKey,
    epoch: Epoch,
    chain: MessageChain,
) -> Result<()> {
    let len = signed(chain.len, "message_count")?;
    let tx = begin(conn)?;
    let head = read::run_head(&tx, run)?.ok_or_else(|| Error::run_not_found(&run.run_id))?;
    epoch.check_write(head.epoch)?;
    tx.prepare_cached("DELETE FROM messages WHERE tenant = ?1 AND run_id = ?2 AND seq >= ?3")
        .db()?
        .execute(params![run.tenant.as_str(), run.run_id.as_str(), len])
        .db()?;
    tx.prepare_cached(
        "UPDATE runs SET message_count = ?3, message_head = ?4, updated_at = ?5
          WHERE tenant = ?1 AND run_id = ?2",
    )
    .db()?
    .execute(params![
        run.tenant.as_str(),
        run.run_id.as_str(),
        len,
        chain.head,
        codec::now().1,
    ])
    .db()?;
    tx.commit().db()
}

/// Sets the quarantine reason unless one is set already, so the first diagnosis is kept; a
/// first quarantine writes its `integrity.corrupt` event in the same transaction, so each
/// corrupt checkpoint is told once.
pub(super) fn quarantine(
    conn: &mut Connection,
    run: &RunKey,
    step: Step,
    reason: &str,
) -> Result<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    let (now, micros) = codec::now();
    let quarantined = tx
        .prepare_cached(
            "UPDATE checkpoints SET quarantine_reason = ?4, quarantined_at = ?5
              WHERE tenant = ?1 AND run_id = ?2 AND step = ?3 AND quarantine_reason IS NULL",
        )
        .db()?
        .execute(params![
            run.tenant.as_str(),
            run.run_id.as_str(),
            signed(step.get(), "step")?,
            reason,
            micros,
        ])
        .db()?;
    if quarantined > 0 {
        record_event(&tx, &quarantine_event(run, step, reason, now))?;
    }
    tx.commit().db()
}

/// Deletes the run from all six tables; returns how many checkpoints went.
pub(super) fn delete_run(conn: &mut Connection, run: &RunKey) -> Result<u64> {
    let tx = begin(conn)?;
    let delete = |table: &str| -> Result<usize> {
        tx.prepare_cached(&format!(
            "DELETE FROM {table} WHERE tenant = ?1 AND run_id = ?2"
        ))
        .db()?
        .execute(params![run.tenant.as_str(), run.run_id.as_str()])
        .db()
    };
    // Children before the run row, which they reference.
    delete("checkpoint_pins")?;
    delete("journal_actions")?;
    delete("tool_results")?;
    delete("messages")?;
    let checkpoints = delete("checkpoints")?;
    if delete("runs")? == 0 {
        // Returning drops the transaction, which rolls back the (empty) child deletes.
        return Err(Error::run_not_found(&run.run_id));
    }
    tx.commit().db()?;
    Ok(checkpoints as u64)
}

/// Deletes the listed, unpinned checkpoints; see [`checkpointd_storage::store::CheckpointStore`].
pub(super) fn delete_checkpoints(
    conn: &mut Connection,
    run: &RunKey,
    epoch: Option<Epoch>,
    steps: &[Step],
) -> Result<DeletedCheckpoints> {
    let tx = begin(conn)?;
    let Some(head) = read::run_head(&tx, run)? else {
        return Err(Error::run_not_found(&run.run_id));
    };
    if let Some(epoch) = epoch {
        epoch.check_write(head.epoch)?;
    }
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let mut outcome = DeletedCheckpoints::default();
    {
        let mut pinned = tx
            .prepare_cached(
                "SELECT 1 FROM checkpoints c
                  WHERE c.tenant = ?1 AND c.run_id = ?2 AND c.step = ?3
                    AND EXISTS (SELECT 1 FROM checkpoint_pins p
                                 WHERE p.tenant = ?1 AND p.run_id = ?2 AND p.step = ?3)",
            )
            .db()?;
        let mut delete = tx
            .prepare_cached(
                "DELETE FROM checkpoints WHERE tenant = ?1 AND run_id = ?2 AND step = ?3
                    AND NOT EXISTS (SELECT 1 FROM checkpoint_pins p
                                     WHERE p.tenant = ?1 AND p.run_id = ?2 AND p.step = ?3)",
            )
            .db()?;
        for step in steps.iter().copied().collect::<BTreeSet<_>>() {
            let at = signed(step.get(), "step")?;
            if pinned.exists(params![tenant, run_id, at]).db()? {
                outcome.pinned.push(step);
            } else {
                outcome.deleted += delete.execute(params![tenant, run_id, at]).db()? as u64;
            }
        }
    }
    if outcome.deleted > 0 {
        // The run's version moves, as with every write that changes what a load returns.
        tx.prepare_cached("UPDATE runs SET updated_at = ?3 WHERE tenant = ?1 AND run_id = ?2")
            .db()?
            .execute(params![tenant, run_id, codec::now().1])
            .db()?;
    }
    tx.commit().db()?;
    Ok(outcome)
}
