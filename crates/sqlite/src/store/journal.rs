//! The tool journal on SQLite: tool results, intents and repairs, in the same
//! IMMEDIATE-transaction shape as the other write paths in `write.rs`.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::read;
use super::write::{self, begin};
use crate::codec::{self, signed, text, unsigned};
use crate::error::DbResultExt;
use checkpointd_core::domain::{
    EntryKind, IntentOutcome, JournalAction, NewToolIntent, NewToolResult, RunKey, Step, ToolRecord,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::{self, IntentPlan, JournalRewrite, RunHead, StoredCall, ToolPlan};
use checkpointd_core::time::whole_micros;

/// The call's journal entry of one kind, if any.
pub(super) fn entry_by_call_id(
    conn: &Connection,
    run: &RunKey,
    call_id: &str,
    kind: EntryKind,
) -> Result<Option<ToolRecord>> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM tool_results
          WHERE tenant = ?1 AND run_id = ?2 AND call_id = ?3 AND intent = ?4",
        read::TOOL_COLUMNS
    ))
    .db()?
    .query_row(
        params![
            run.tenant.as_str(),
            run.run_id.as_str(),
            call_id,
            kind == EntryKind::Intent
        ],
        read::tool_row,
    )
    .optional()
    .db()?
    .map(read::RawTool::into_record)
    .transpose()
}

/// Both journal entries of a call, each if journalled.
fn stored_call(conn: &Connection, run: &RunKey, call_id: &str) -> Result<StoredCall> {
    Ok(StoredCall {
        result: entry_by_call_id(conn, run, call_id, EntryKind::Result)?,
        intent: entry_by_call_id(conn, run, call_id, EntryKind::Intent)?,
    })
}

/// Writes one journal row, intent or result.
pub(super) fn insert_entry(tx: &Transaction<'_>, run: &RunKey, record: &ToolRecord) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO tool_results (tenant, run_id, seq, call_id, tool_name, step, is_error,
                                   chain, recorded_at, intent, output, arguments_digest)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )
    .db()?
    .execute(params![
        run.tenant.as_str(),
        run.run_id.as_str(),
        signed(record.seq, "tool seq")?,
        record.call_id.as_str(),
        record.tool_name,
        signed(record.step.get(), "step")?,
        record.is_error,
        record.chain,
        codec::to_micros(record.recorded_at),
        record.kind == EntryKind::Intent,
        record.output,
        record.arguments_digest.as_str(),
    ])
    .db()?;
    Ok(())
}

/// RecordToolResult: look up the call id, plan, apply, commit.
pub(super) fn record_tool_result(
    conn: &mut Connection,
    request: &NewToolResult,
) -> Result<(ToolRecord, bool)> {
    let run = &request.run;
    let tx = begin(conn)?;
    let head = read::run_head(&tx, run)?.unwrap_or(RunHead::NEW);
    let stored = stored_call(&tx, run, request.call_id.as_str())?;
    let (mut record, tools) = match plan::plan_tool_result(request, &head, stored)? {
        ToolPlan::Existing(record) => return Ok((record, true)),
        ToolPlan::Insert(record, tools) => (record, tools),
    };
    // Keep only what the column keeps, so this answer equals what a retry reads back.
    record.recorded_at = whole_micros(record.recorded_at);

    write::upsert_run(&tx, run, &RunHead { tools, ..head }, codec::now().1)?;
    insert_entry(&tx, run, &record)?;
    tx.commit().db()?;
    Ok((record, false))
}

/// RecordToolResults: look up every call id, plan the batch, apply it, commit: all or none.
pub(super) fn record_tool_results(
    conn: &mut Connection,
    requests: &[NewToolResult],
) -> Result<Vec<(ToolRecord, bool)>> {
    let Some(first) = requests.first() else {
        return Ok(Vec::new());
    };
    let run = &first.run;
    let tx = begin(conn)?;
    let head = read::run_head(&tx, run)?.unwrap_or(RunHead::NEW);
    let existing = requests
        .iter()
        .map(|request| stored_call(&tx, run, request.call_id.as_str()))
        .collect::<Result<Vec<_>>>()?;
    let mut plan = plan::plan_tool_results(requests, &head, existing)?;
    let Some(tools) = plan.tools else {
        return Ok(plan.answers);
    };
    // Keep only what the column keeps, so these answers equal what a retry reads back.
    plan.round_times(whole_micros);
    write::upsert_run(&tx, run, &RunHead { tools, ..head }, codec::now().1)?;
    for record in &plan.inserts {
        insert_entry(&tx, run, record)?;
    }
    tx.commit().db()?;
    Ok(plan.answers)
}

/// RecordToolIntent: look up the call, plan, apply, commit.
pub(super) fn record_tool_intent(
    conn: &mut Connection,
    request: &NewToolIntent,
) -> Result<IntentOutcome> {
    let run = &request.run;
    let tx = begin(conn)?;
    let head = read::run_head(&tx, run)?.unwrap_or(RunHead::NEW);
    let call_id = request.call_id.as_str();
    let existing_intent = entry_by_call_id(&tx, run, call_id, EntryKind::Intent)?;
    let existing_result = entry_by_call_id(&tx, run, call_id, EntryKind::Result)?;
    let (mut record, tools) =
        match plan::plan_tool_intent(request, &head, existing_intent, existing_result)? {
            IntentPlan::Existing(outcome) => return Ok(outcome),
            IntentPlan::Insert(record, tools) => (record, tools),
        };
    // Keep only what the column keeps, so this answer equals what a retry reads back.
    record.recorded_at = whole_micros(record.recorded_at);
    write::upsert_run(&tx, run, &RunHead { tools, ..head }, codec::now().1)?;
    insert_entry(&tx, run, &record)?;
    tx.commit().db()?;
    Ok(IntentOutcome {
        intent: Some(record),
        result: None,
        already_recorded: false,
    })
}

/// RepairJournal's write: replace the journal's tail, quarantine what covered it, record who.
pub(super) fn rewrite_journal(
    conn: &mut Connection,
    rewrite: &JournalRewrite,
) -> Result<Vec<Step>> {
    let run = &rewrite.run;
    let tx = begin(conn)?;
    let head = read::run_head(&tx, run)?.ok_or_else(|| Error::run_not_found(&run.run_id))?;
    plan::check_journal_unchanged(&rewrite.expected, &head.tools)?;
    tx.prepare_cached("DELETE FROM tool_results WHERE tenant = ?1 AND run_id = ?2 AND seq >= ?3")
        .db()?
        .execute(params![
            run.tenant.as_str(),
            run.run_id.as_str(),
            signed(rewrite.from_seq, "tool seq")?
        ])
        .db()?;
    for record in &rewrite.entries {
        insert_entry(&tx, run, record)?;
    }
    write::upsert_run(
        &tx,
        run,
        &RunHead {
            tools: rewrite.head,
            ..head
        },
        codec::now().1,
    )?;
    let quarantined = match rewrite.quarantine_from {
        Some(from) => quarantine_covering(
            &tx,
            run,
            from,
            &rewrite.quarantine_reason(),
            rewrite.action.acted_at,
        )?,
        None => Vec::new(),
    };
    let action = &rewrite.action;
    tx.prepare_cached(
        "INSERT INTO journal_actions (tenant, run_id, seq, call_id, action, actor, detail,
                                      acted_at)
         SELECT ?1, ?2, COALESCE(MAX(seq), 0) + 1, ?3, ?4, ?5, ?6, ?7
           FROM journal_actions WHERE tenant = ?1 AND run_id = ?2",
    )
    .db()?
    .execute(params![
        run.tenant.as_str(),
        run.run_id.as_str(),
        action.call_id,
        action.action,
        action.actor,
        action.detail,
        codec::to_micros(action.acted_at),
    ])
    .db()?;
    tx.commit().db()?;
    Ok(quarantined)
}

/// Quarantines the checkpoints that cover journal entry `from` or later; returns their steps.
fn quarantine_covering(
    tx: &Transaction<'_>,
    run: &RunKey,
    from: u64,
    reason: &str,
    at: std::time::SystemTime,
) -> Result<Vec<Step>> {
    let mut statement = tx
        .prepare_cached(
            "UPDATE checkpoints SET quarantine_reason = ?4, quarantined_at = ?5
              WHERE tenant = ?1 AND run_id = ?2 AND tool_count >= ?3
                AND quarantine_reason IS NULL
             RETURNING step",
        )
        .db()?;
    let rows = statement
        .query_map(
            params![
                run.tenant.as_str(),
                run.run_id.as_str(),
                signed(from, "tool count")?,
                reason,
                codec::to_micros(at),
            ],
            |row| unsigned(row, 0),
        )
        .db()?;
    let mut steps: Vec<Step> = rows
        .map(|step| step.map(Step::new))
        .collect::<rusqlite::Result<_>>()
        .db()?;
    steps.sort();
    Ok(steps)
}

/// Every repair made to the run's journal, oldest first.
pub(super) fn journal_actions(conn: &Connection, run: &RunKey) -> Result<Vec<JournalAction>> {
    let mut statement = conn
        .prepare_cached(
            "SELECT call_id, action, actor, detail, acted_at FROM journal_actions
              WHERE tenant = ?1 AND run_id = ?2 ORDER BY seq",
        )
        .db()?;
    let rows = statement
        .query_map(params![run.tenant.as_str(), run.run_id.as_str()], |row| {
            Ok(JournalAction {
                call_id: text(row, 0)?,
                action: text(row, 1)?,
                actor: text(row, 2)?,
                detail: text(row, 3)?,
                acted_at: codec::from_micros(row.get(4)?),
            })
        })
        .db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}
