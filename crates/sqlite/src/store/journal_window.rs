//! The part of the tool journal a load reads for its scope, with the chain digests stored
//! around it: the store contract's journal window on SQLite.

use rusqlite::{Connection, OptionalExtension, params};

use super::read;
use crate::codec::signed;
use crate::error::DbResultExt;
use checkpointd_core::domain::{JournalScope, RunKey, Step, ToolRecord, ToolWindow};
use checkpointd_core::error::Result;

/// The entries a load with `scope` reads for the checkpoint at `step` covering `tool_count`
/// entries: all of them; those from the first entry of `step` on, found through the
/// `tool_results_by_step` index; or none. Outside `All`, with the digests stored before the
/// window and at `tool_count`, each read by key.
pub(super) fn read(
    conn: &Connection,
    run: &RunKey,
    scope: JournalScope,
    step: Step,
    tool_count: u64,
) -> Result<(Vec<ToolRecord>, ToolWindow)> {
    let from = match scope {
        JournalScope::All => return Ok((read::tools(conn, run)?, ToolWindow::WHOLE)),
        JournalScope::Step => first_of_step(conn, run, step)?,
        JournalScope::None => ToolWindow::NO_ENTRIES,
    };
    let tools = if from == ToolWindow::NO_ENTRIES {
        Vec::new()
    } else {
        read::tools_from(conn, run, from)?
    };
    let chain_at = |seq: u64| match seq {
        0 => Ok(None),
        seq => read::tool_chain_at(conn, run, signed(seq, "seq")?),
    };
    let window = ToolWindow {
        from,
        before: chain_at(from - 1)?,
        covered: chain_at(tool_count)?,
    };
    Ok((tools, window))
}

/// The seq of the first entry of `step`, or the journal's length + 1 when it has none.
fn first_of_step(conn: &Connection, run: &RunKey, step: Step) -> Result<u64> {
    let step = signed(step.get(), "step")?;
    let first: Option<i64> = conn
        .prepare_cached(
            "SELECT coalesce(
                 (SELECT min(seq) FROM tool_results
                   WHERE tenant = ?1 AND run_id = ?2 AND step = ?3),
                 (SELECT coalesce(max(seq), 0) + 1 FROM tool_results
                   WHERE tenant = ?1 AND run_id = ?2))",
        )
        .db()?
        .query_row(
            params![run.tenant.as_str(), run.run_id.as_str(), step],
            |row| row.get(0),
        )
        .optional()
        .db()?
        .flatten();
    // A negative seq (only by tampering) reads nothing, which verification then reports.
    Ok(first.map_or(1, |first| {
        u64::try_from(first).unwrap_or(ToolWindow::NO_ENTRIES)
    }))
}
