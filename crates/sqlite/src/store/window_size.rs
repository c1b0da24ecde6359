//! Whether a window of a checkpoint's log would stop short, from the stored sizes of its
//! messages: what refuses an older client's oversized answer before any body is read.

use rusqlite::{Connection, Row, params};

use super::read::{find_checkpoint, log_bounds};
use crate::codec::unsigned;
use crate::error::DbResultExt;
use checkpointd_core::domain::{MessageWindow, RunKey, Step};
use checkpointd_core::error::Result;
use checkpointd_storage::store::Which;

/// The step of the checkpoint `which` names when `window` of its log stops short of its
/// `message_count`. `length` of a BLOB is read from the record header, so no message body is
/// loaded (a message stored across overflow pages is not paged in for it).
pub(super) fn window_stops_short(
    conn: &Connection,
    run: &RunKey,
    which: Which,
    window: MessageWindow,
) -> Result<Option<Step>> {
    let read = |row: &Row<'_>| Ok((unsigned(row, 0)?, unsigned(row, 1)?));
    let Some((step, count)) = find_checkpoint(conn, run, which, "step, message_count", read)?
    else {
        return Ok(None);
    };
    let (start, below) = log_bounds(window.offset, count);
    let mut statement = conn
        .prepare_cached(
            "SELECT length(content) FROM messages
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
    while let Some(row) = rows.next().db()? {
        let size = usize::try_from(unsigned(row, 0).db()?).unwrap_or(usize::MAX);
        if !cut.admit(size) {
            return Ok(Some(Step::new(step)));
        }
    }
    Ok(None)
}
