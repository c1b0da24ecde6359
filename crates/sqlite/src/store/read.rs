//! Queries that only read: each is a primary-key or index lookup scoped by (tenant, run_id).
//!
//! They take a `&Connection` so the write path can call them inside its own transaction
//! (`Transaction` derefs to `Connection`) and see exactly what it is about to change.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::codec::{self, bytes, decode_metadata, digest, optional_text, text, unsigned};
use crate::error::DbResultExt;
use checkpointd_core::domain::{
    ArgumentsDigest, CallId, CheckpointSummary, Checksum, Digest32, EntryKind, Epoch, ListQuery,
    Message, MessageChain, MessageWindow, Quarantine, RunId, RunInfo, RunKey, Step,
    StoredCheckpoint, Tenant, ToolChain, ToolRecord, WindowChains, prefix_upper_bound,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::{ExistingCheckpoint, RunHead};
use checkpointd_storage::store::{CheckpointHead, LatestHead, Which};

/// The run's write-side head, or `None` when the run does not exist.
pub(super) fn run_head(conn: &Connection, run: &RunKey) -> Result<Option<RunHead>> {
    conn.prepare_cached(
        "SELECT epoch, message_count, message_head, tool_count, tool_head
           FROM runs WHERE tenant = ?1 AND run_id = ?2",
    )
    .db()?
    .query_row(params![run.tenant.as_str(), run.run_id.as_str()], |row| {
        head_columns(row, 0)
    })
    .optional()
    .db()
}

/// A run head from the five columns epoch, message_count, message_head, tool_count, tool_head,
/// starting at `first`.
fn head_columns(row: &Row<'_>, first: usize) -> rusqlite::Result<RunHead> {
    Ok(RunHead {
        epoch: Epoch::new(unsigned(row, first)?),
        messages: MessageChain {
            len: unsigned(row, first + 1)?,
            head: digest(row, first + 2)?,
        },
        tools: ToolChain {
            len: unsigned(row, first + 3)?,
            head: digest(row, first + 4)?,
        },
    })
}

/// Whether the run has a row.
pub(super) fn run_exists(conn: &Connection, run: &RunKey) -> Result<bool> {
    conn.prepare_cached("SELECT 1 FROM runs WHERE tenant = ?1 AND run_id = ?2")
        .db()?
        .exists(params![run.tenant.as_str(), run.run_id.as_str()])
        .db()
}

/// What a Save plans from, read in one statement: the run's head (`None` when the run does not
/// exist), the checkpoint already at `step`, the highest step whose checkpoint is not
/// quarantined, and the step carrying `label` (`label = NULL` matches nothing).
pub(super) struct SaveFacts {
    pub head: Option<RunHead>,
    pub existing: Option<ExistingCheckpoint>,
    pub latest_step: Option<Step>,
    pub label_step: Option<Step>,
}

pub(super) fn save_facts(
    conn: &Connection,
    run: &RunKey,
    step: i64,
    label: Option<&str>,
) -> Result<SaveFacts> {
    conn.prepare_cached(
        "SELECT r.epoch, r.message_count, r.message_head, r.tool_count, r.tool_head,
                e.id, e.epoch, e.checksum, e.created_at, e.quarantine_reason IS NOT NULL, e.label,
                (SELECT step FROM checkpoints
                  WHERE tenant = ?1 AND run_id = ?2 AND quarantine_reason IS NULL
                  ORDER BY step DESC LIMIT 1),
                (SELECT step FROM checkpoints WHERE tenant = ?1 AND run_id = ?2 AND label = ?4)
           FROM (SELECT 1)
           LEFT JOIN runs AS r ON r.tenant = ?1 AND r.run_id = ?2
           LEFT JOIN checkpoints AS e ON e.tenant = ?1 AND e.run_id = ?2 AND e.step = ?3",
    )
    .db()?
    .query_row(
        params![run.tenant.as_str(), run.run_id.as_str(), step, label],
        |row| {
            let present = |index| -> rusqlite::Result<bool> {
                Ok(row.get_ref(index)? != rusqlite::types::ValueRef::Null)
            };
            let step_at = |index| -> rusqlite::Result<Option<Step>> {
                Ok(if present(index)? {
                    Some(Step::new(unsigned(row, index)?))
                } else {
                    None
                })
            };
            let head = if present(0)? {
                Some(head_columns(row, 0)?)
            } else {
                None
            };
            let existing = if present(5)? {
                Some(ExistingCheckpoint {
                    id: text(row, 5)?,
                    epoch: Epoch::new(unsigned(row, 6)?),
                    checksum: Checksum::from_bytes(digest(row, 7)?),
                    created_at: codec::from_micros(row.get(8)?),
                    quarantined: row.get(9)?,
                    label: optional_text(row, 10)?,
                })
            } else {
                None
            };
            Ok(SaveFacts {
                head,
                existing,
                latest_step: step_at(11)?,
                label_step: step_at(12)?,
            })
        },
    )
    .db()
}

/// The step of the checkpoint labelled `label`, through the partial unique index.
pub(super) fn label_step(conn: &Connection, run: &RunKey, label: &str) -> Result<Option<Step>> {
    conn.prepare_cached(
        "SELECT step FROM checkpoints WHERE tenant = ?1 AND run_id = ?2 AND label = ?3",
    )
    .db()?
    .query_row(
        params![run.tenant.as_str(), run.run_id.as_str(), label],
        |row| unsigned(row, 0).map(Step::new),
    )
    .optional()
    .db()
}

/// The chain value stored with message `seq`, or `None` when that row is missing.
pub(super) fn message_chain_at(
    conn: &Connection,
    run: &RunKey,
    seq: i64,
) -> Result<Option<Digest32>> {
    conn.prepare_cached("SELECT chain FROM messages WHERE tenant = ?1 AND run_id = ?2 AND seq = ?3")
        .db()?
        .query_row(
            params![run.tenant.as_str(), run.run_id.as_str(), seq],
            |row| digest(row, 0),
        )
        .optional()
        .db()
}

/// The chain value stored with tool journal entry `seq` (1-based), if the entry exists.
pub(super) fn tool_chain_at(conn: &Connection, run: &RunKey, seq: i64) -> Result<Option<Digest32>> {
    conn.prepare_cached(
        "SELECT chain FROM tool_results WHERE tenant = ?1 AND run_id = ?2 AND seq = ?3",
    )
    .db()?
    .query_row(
        params![run.tenant.as_str(), run.run_id.as_str(), seq],
        |row| digest(row, 0),
    )
    .optional()
    .db()
}

/// The columns of a full checkpoint row, in the order [`checkpoint_row`] reads them.
/// The last says whether the run holds a checkpoint above this one (a primary-key probe in the
/// same statement): after a latest load, whether the answer passes over quarantined ones.
const CHECKPOINT_COLUMNS: &str = "step, id, epoch, content_type, metadata, message_count, \
     tool_count, checksum, created_at, quarantine_reason, state, label, quarantined_at, \
     EXISTS (SELECT 1 FROM checkpoints AS newer WHERE newer.tenant = ?1 \
             AND newer.run_id = ?2 AND newer.step > checkpoints.step)";

/// One checkpoint with its window of messages, and whether a checkpoint lies above it; the
/// caller reads the journal beside it, inside one transaction so the reads see one snapshot.
pub(super) fn checkpoint(
    conn: &Connection,
    run: &RunKey,
    which: Which,
    window: MessageWindow,
) -> Result<Option<(StoredCheckpoint, bool)>> {
    let read = |row: &Row<'_>| Ok((checkpoint_row(row, run)?, row.get::<_, bool>(13)?));
    let found = find_checkpoint(conn, run, which, CHECKPOINT_COLUMNS, read)?;
    let Some((mut checkpoint, has_newer)) = found else {
        return Ok(None);
    };
    read_window(conn, run, &mut checkpoint, window)?;
    Ok(Some((checkpoint, has_newer)))
}

/// `columns` of the checkpoint `which` names, read by `read`; `None` when there is none.
pub(super) fn find_checkpoint<T>(
    conn: &Connection,
    run: &RunKey,
    which: Which,
    columns: &str,
    read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Option<T>> {
    let scope = "tenant = ?1 AND run_id = ?2";
    let (sql, step) = match which {
        Which::LatestBelow(None) => (
            format!(
                "SELECT {columns} FROM checkpoints WHERE {scope} \
                 AND quarantine_reason IS NULL ORDER BY step DESC LIMIT 1"
            ),
            None,
        ),
        Which::LatestBelow(Some(below)) => (
            format!(
                "SELECT {columns} FROM checkpoints WHERE {scope} \
                 AND quarantine_reason IS NULL AND step < ?3 ORDER BY step DESC LIMIT 1"
            ),
            Some(below),
        ),
        Which::At(at) => (
            format!("SELECT {columns} FROM checkpoints WHERE {scope} AND step = ?3"),
            Some(at),
        ),
    };
    let step = step
        .map(|step| codec::signed(step.get(), "step"))
        .transpose()?;
    let mut statement = conn.prepare_cached(&sql).db()?;
    match step {
        None => statement.query_row(params![run.tenant.as_str(), run.run_id.as_str()], read),
        Some(step) => statement.query_row(
            params![run.tenant.as_str(), run.run_id.as_str(), step],
            read,
        ),
    }
    .optional()
    .db()
}

/// The quarantine of a row from its reason and its time (unix microseconds, NULL when the
/// checkpoint was quarantined before the time was kept).
fn quarantine(reason: Option<String>, at: Option<i64>) -> Option<Quarantine> {
    reason.map(|reason| Quarantine {
        reason,
        quarantined_at: at.map(codec::from_micros),
    })
}

fn checkpoint_row(row: &Row<'_>, run: &RunKey) -> rusqlite::Result<StoredCheckpoint> {
    let reason = optional_text(row, 9)?;
    Ok(StoredCheckpoint {
        id: text(row, 1)?,
        run_id: run.run_id.clone(),
        step: Step::new(unsigned(row, 0)?),
        epoch: Epoch::new(unsigned(row, 2)?),
        content_type: text(row, 3)?,
        state: bytes(row, 10)?,
        metadata: decode_metadata(&bytes(row, 4)?),
        messages: Vec::new(),
        messages_from: 0,
        messages_end: 0,
        chains: WindowChains::default(),
        message_count: unsigned(row, 5)?,
        tool_count: unsigned(row, 6)?,
        checksum: Checksum::from_bytes(digest(row, 7)?),
        created_at: codec::from_micros(row.get(8)?),
        quarantine: quarantine(reason, row.get(12)?),
        label: optional_text(row, 11)?,
    })
}

/// The log rows a window from `offset` of a checkpoint with `count` messages spans, as the
/// bounds its queries take (`seq >= start AND seq < below`). A tampered count past i64::MAX
/// simply means "all of them".
pub(super) fn log_bounds(offset: u64, count: u64) -> (i64, i64) {
    let start = i64::try_from(offset.min(count)).unwrap_or(i64::MAX);
    let below = i64::try_from(count).unwrap_or(i64::MAX);
    (start, below)
}

/// Reads `window` of the checkpoint's messages, ascending, with the chain digests stored
/// around it; fewer messages than the window spans when rows are missing, which the engine's
/// verification reports.
fn read_window(
    conn: &Connection,
    run: &RunKey,
    checkpoint: &mut StoredCheckpoint,
    window: MessageWindow,
) -> Result<()> {
    let count = checkpoint.message_count;
    let from = window.offset.min(count);
    let (start, below) = log_bounds(window.offset, count);
    let mut statement = conn
        .prepare_cached(
            "SELECT seq, role, content FROM messages
              WHERE tenant = ?1 AND run_id = ?2 AND seq >= ?3 AND seq < ?4 ORDER BY seq",
        )
        .db()?;
    let mut rows = statement
        .query(params![
            run.tenant.as_str(),
            run.run_id.as_str(),
            start,
            below
        ])
        .db()?;
    let mut cut = window.cut();
    let mut end = count;
    let mut messages = Vec::new();
    while let Some(row) = rows.next().db()? {
        // The size first, from SQLite's own buffer: the body of the message past the window is
        // never copied out.
        let size = row.get_ref(2).db()?.as_bytes().map_or(0, <[u8]>::len);
        if !cut.admit(size) {
            end = unsigned(row, 0).db()?;
            break;
        }
        messages.push(Message {
            role: text(row, 1).db()?,
            content: bytes(row, 2).db()?,
        });
    }
    let chain_at = |seq: u64| match seq.checked_sub(1) {
        Some(seq) => message_chain_at(conn, run, codec::signed(seq, "seq")?),
        None => Ok(None),
    };
    checkpoint.chains = WindowChains {
        before: chain_at(from)?,
        after: if end < count { chain_at(end)? } else { None },
        head: if end < count { chain_at(count)? } else { None },
    };
    checkpoint.messages = messages;
    checkpoint.messages_from = from;
    checkpoint.messages_end = end;
    Ok(())
}

/// The columns of a tool journal row, in the order [`tool_row`] reads them.
pub(super) const TOOL_COLUMNS: &str =
    "seq, call_id, tool_name, step, is_error, chain, recorded_at, intent, output, arguments_digest";

/// The run's whole tool journal, ascending by seq.
pub(super) fn tools(conn: &Connection, run: &RunKey) -> Result<Vec<ToolRecord>> {
    tools_from(conn, run, 1)
}

/// The run's tool journal from seq `from` on, ascending: a range of the primary key.
pub(super) fn tools_from(conn: &Connection, run: &RunKey, from: u64) -> Result<Vec<ToolRecord>> {
    let mut statement = conn
        .prepare_cached(&format!(
            "SELECT {TOOL_COLUMNS} FROM tool_results
              WHERE tenant = ?1 AND run_id = ?2 AND seq >= ?3 ORDER BY seq"
        ))
        .db()?;
    let from = codec::signed(from, "seq")?;
    let rows = statement
        .query_map(
            params![run.tenant.as_str(), run.run_id.as_str(), from],
            tool_row,
        )
        .db()?;
    let mut records = Vec::new();
    for row in rows {
        records.push(row.db()?.into_record()?);
    }
    Ok(records)
}

/// A tool journal row whose call id has not been validated yet; that needs our error type,
/// which a rusqlite row callback cannot return.
pub(super) struct RawTool {
    call_id: String,
    record: ToolRecordFields,
}

struct ToolRecordFields {
    seq: u64,
    tool_name: String,
    step: Step,
    output: Vec<u8>,
    is_error: bool,
    recorded_at: std::time::SystemTime,
    chain: Digest32,
    kind: EntryKind,
    arguments_digest: String,
}

/// Reads a row selected with [`TOOL_COLUMNS`].
pub(super) fn tool_row(row: &Row<'_>) -> rusqlite::Result<RawTool> {
    Ok(RawTool {
        call_id: text(row, 1)?,
        record: ToolRecordFields {
            seq: unsigned(row, 0)?,
            tool_name: text(row, 2)?,
            step: Step::new(unsigned(row, 3)?),
            is_error: row.get::<_, i64>(4)? != 0,
            chain: digest(row, 5)?,
            recorded_at: codec::from_micros(row.get(6)?),
            kind: if row.get::<_, i64>(7)? != 0 {
                EntryKind::Intent
            } else {
                EntryKind::Result
            },
            output: bytes(row, 8)?,
            arguments_digest: text(row, 9)?,
        },
    })
}

impl RawTool {
    pub(super) fn into_record(self) -> Result<ToolRecord> {
        let fields = self.record;
        // A journal entry cannot be skipped like a checkpoint (its tool might run twice), so a
        // damaged call id fails the read, as the engine fails any damaged journal.
        let call_id = CallId::parse(&self.call_id).map_err(|_| {
            Error::DataLoss(format!(
                "tool journal entry {} has a damaged call_id",
                fields.seq
            ))
        })?;
        Ok(ToolRecord {
            kind: fields.kind,
            call_id,
            tool_name: fields.tool_name,
            step: fields.step,
            output: fields.output,
            is_error: fields.is_error,
            seq: fields.seq,
            recorded_at: fields.recorded_at,
            chain: fields.chain,
            arguments_digest: ArgumentsDigest::stored(fields.arguments_digest),
        })
    }
}

/// Every step that has a checkpoint, ascending.
pub(super) fn steps(conn: &Connection, run: &RunKey) -> Result<Vec<Step>> {
    let mut statement = conn
        .prepare_cached(
            "SELECT step FROM checkpoints WHERE tenant = ?1 AND run_id = ?2 ORDER BY step",
        )
        .db()?;
    let rows = statement
        .query_map(params![run.tenant.as_str(), run.run_id.as_str()], |row| {
            unsigned(row, 0).map(Step::new)
        })
        .db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}

/// Up to `query.limit` summaries within the query's bounds, in its order: an index range scan
/// on the primary key either way. The metadata filter is applied to each row as the one
/// statement steps through the range (metadata is stored in checkpointd's own encoding, which
/// SQL cannot read), so the statement has no LIMIT then and stops at the page's last match.
pub(super) fn list(
    conn: &Connection,
    run: &RunKey,
    query: &ListQuery,
) -> Result<Vec<CheckpointSummary>> {
    // Steps are never negative, so "above -1" is "from the start" and "below i64::MAX" is "to
    // the end" (no step reaches it): one statement per direction serves every query.
    let above = match query.above {
        Some(step) => codec::signed(step.get(), "step")?,
        None => -1,
    };
    let below = match query.below {
        Some(step) => codec::signed(step.get(), "step")?,
        None => i64::MAX,
    };
    // Without a filter every row is a match, and SQLite stops at the limit itself.
    let limit = match query.metadata.is_empty() {
        true => i64::try_from(query.limit).unwrap_or(i64::MAX),
        false => -1,
    };
    let order = if query.descending { "DESC" } else { "ASC" };
    let mut statement = conn
        .prepare_cached(&format!(
            "SELECT step, length(state), quarantine_reason, created_at, checksum, epoch,
                    message_count, label, metadata, id, quarantined_at
               FROM checkpoints WHERE tenant = ?1 AND run_id = ?2 AND step > ?3 AND step < ?4
              ORDER BY step {order} LIMIT ?5"
        ))
        .db()?;
    let rows = statement
        .query_map(
            params![
                run.tenant.as_str(),
                run.run_id.as_str(),
                above,
                below,
                limit
            ],
            |row| {
                let reason = optional_text(row, 2)?;
                Ok(CheckpointSummary {
                    step: Step::new(unsigned(row, 0)?),
                    id: text(row, 9)?,
                    size_bytes: unsigned(row, 1)?,
                    quarantine: quarantine(reason, row.get(10)?),
                    created_at: codec::from_micros(row.get(3)?),
                    checksum: Checksum::from_bytes(digest(row, 4)?),
                    epoch: Epoch::new(unsigned(row, 5)?),
                    message_count: unsigned(row, 6)?,
                    label: optional_text(row, 7)?,
                    metadata: decode_metadata(&bytes(row, 8)?),
                })
            },
        )
        .db()?;
    let mut page = Vec::new();
    for summary in rows {
        if page.len() == query.limit {
            break;
        }
        let summary = summary.db()?;
        if query.matches(&summary.metadata) {
            page.push(summary);
        }
    }
    Ok(page)
}

/// The head columns of a run row with its checkpoint figures, as [`run_info_row`] reads them.
const RUN_INFO: &str = "SELECT r.run_id, r.epoch, r.message_count, r.tool_count, r.updated_at,
        (SELECT max(step) FROM checkpoints c WHERE c.tenant = r.tenant AND c.run_id = r.run_id),
        (SELECT max(step) FROM checkpoints c WHERE c.tenant = r.tenant AND c.run_id = r.run_id
            AND quarantine_reason IS NULL),
        (SELECT count(*) FROM checkpoints c WHERE c.tenant = r.tenant AND c.run_id = r.run_id)
   FROM runs r";

/// A row of [`RUN_INFO`]; the run id is checked like wire input, since a damaged one must not
/// reach a client as if it were valid.
fn run_info_row(row: &Row<'_>) -> rusqlite::Result<RunInfo> {
    let raw: String = text(row, 0)?;
    let run_id = RunId::parse(&raw).map_err(|error| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(error))
    })?;
    let step = |index| -> rusqlite::Result<Option<Step>> {
        Ok(match row.get::<_, Option<i64>>(index)? {
            None => None,
            Some(_) => Some(Step::new(unsigned(row, index)?)),
        })
    };
    Ok(RunInfo {
        run_id,
        epoch: Epoch::new(unsigned(row, 1)?),
        message_count: unsigned(row, 2)?,
        tool_count: unsigned(row, 3)?,
        updated_at: codec::from_micros(row.get(4)?),
        latest_step: step(5)?,
        latest_valid_step: step(6)?,
        checkpoint_count: unsigned(row, 7)?,
    })
}

/// The run's [`RunInfo`], or `None` when the run does not exist.
pub(super) fn run_info(conn: &Connection, run: &RunKey) -> Result<Option<RunInfo>> {
    conn.prepare_cached(&format!("{RUN_INFO} WHERE r.tenant = ?1 AND r.run_id = ?2"))
        .db()?
        .query_row(
            params![run.tenant.as_str(), run.run_id.as_str()],
            run_info_row,
        )
        .optional()
        .db()
}

/// One keyset page of the tenant's runs whose id starts with `prefix`, after `after`: a range
/// on the primary key, whose BINARY collation is byte order.
pub(super) fn list_runs(
    conn: &Connection,
    tenant: &Tenant,
    prefix: &str,
    after: Option<&RunId>,
    limit: usize,
) -> Result<Vec<RunInfo>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    // The empty string sorts before every run id, so "after nothing" needs no statement of its own.
    let after = after.map_or("", RunId::as_str);
    match prefix_upper_bound(prefix) {
        Some(bound) => conn
            .prepare_cached(&format!(
                "{RUN_INFO} WHERE r.tenant = ?1 AND r.run_id >= ?2 AND r.run_id < ?3
                   AND r.run_id > ?4 ORDER BY r.run_id LIMIT ?5"
            ))
            .db()?
            .query_map(
                params![tenant.as_str(), prefix, bound, after, limit],
                run_info_row,
            )
            .db()?
            .collect::<rusqlite::Result<_>>()
            .db(),
        None => conn
            .prepare_cached(&format!(
                "{RUN_INFO} WHERE r.tenant = ?1 AND r.run_id >= ?2 AND r.run_id > ?3
                  ORDER BY r.run_id LIMIT ?4"
            ))
            .db()?
            .query_map(params![tenant.as_str(), prefix, after, limit], run_info_row)
            .db()?
            .collect::<rusqlite::Result<_>>()
            .db(),
    }
}

/// The run's [`LatestHead`]: one statement over the run row and the latest valid checkpoint.
pub(super) fn latest_head(conn: &Connection, run: &RunKey) -> Result<Option<LatestHead>> {
    conn.prepare_cached(
        "SELECT r.tool_count, r.tool_head, c.step, c.id, c.epoch, c.checksum,
                EXISTS (SELECT 1 FROM checkpoints AS newer
                         WHERE newer.tenant = r.tenant AND newer.run_id = r.run_id
                           AND newer.step > coalesce(c.step, -1))
           FROM runs r
           LEFT JOIN checkpoints c
             ON c.tenant = r.tenant AND c.run_id = r.run_id
            AND c.step = (SELECT max(step) FROM checkpoints
                           WHERE tenant = r.tenant AND run_id = r.run_id
                             AND quarantine_reason IS NULL)
          WHERE r.tenant = ?1 AND r.run_id = ?2",
    )
    .db()?
    .query_row(params![run.tenant.as_str(), run.run_id.as_str()], |row| {
        let checkpoint = match row.get::<_, Option<i64>>(2)? {
            None => None,
            Some(_) => Some(CheckpointHead {
                step: Step::new(unsigned(row, 2)?),
                id: text(row, 3)?,
                epoch: Epoch::new(unsigned(row, 4)?),
                checksum: Checksum::from_bytes(digest(row, 5)?),
            }),
        };
        Ok(LatestHead {
            checkpoint,
            tools: ToolChain {
                len: unsigned(row, 0)?,
                head: digest(row, 1)?,
            },
            has_newer: row.get(6)?,
        })
    })
    .optional()
    .db()
}
