//! The approval inbox's page on SQLite ([`TaskQueue::list_waiting`]): the filters, order and
//! page in SQL, with a count of every waiting task, of the matching ones, and per action.
//!
//! [`TaskQueue::list_waiting`]: checkpointd_storage::queue::TaskQueue::list_waiting

use rusqlite::{Connection, named_params};

use super::task_row::decode;
use crate::codec::to_micros;
use crate::error::DbResultExt;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::Result;
use checkpointd_storage::queue::{MAX_ACTION_COUNTS, Task, WaitingPage, WaitingQuery};
use checkpointd_storage::task_columns;

/// The rows a query's filters match; the unset ones (NULL) match everything.
const MATCHING: &str = "FROM tasks WHERE tenant = :tenant AND state = 'input_required' \
     AND (:action IS NULL OR approval_action = :action) \
     AND (:before IS NULL OR approval_requested_at <= :before)";

pub(super) fn list_waiting(
    conn: &Connection,
    tenant: &Tenant,
    query: &WaitingQuery,
) -> Result<WaitingPage> {
    let tenant = tenant.as_str();
    let action = query.action.as_deref();
    let before = query.requested_before.map(to_micros);
    let waiting: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM tasks WHERE tenant = :tenant AND state = 'input_required'",
        )
        .db()?
        .query_row(named_params! { ":tenant": tenant }, |row| row.get(0))
        .db()?;
    let matching: i64 = conn
        .prepare_cached(&format!("SELECT count(*) {MATCHING}"))
        .db()?
        .query_row(
            named_params! { ":tenant": tenant, ":action": action, ":before": before },
            |row| row.get(0),
        )
        .db()?;
    let actions = conn
        .prepare_cached(
            "SELECT approval_action, count(*) AS n FROM tasks \
             WHERE tenant = :tenant AND state = 'input_required' \
             GROUP BY approval_action ORDER BY n DESC, approval_action LIMIT :most",
        )
        .db()?
        .query_map(
            named_params! { ":tenant": tenant, ":most": MAX_ACTION_COUNTS as i64 },
            |row| {
                Ok((
                    row.get::<_, Option<String>>(0)?.unwrap_or_default(),
                    row.get::<_, i64>(1)?.max(0) as u64,
                ))
            },
        )
        .db()?
        .collect::<rusqlite::Result<Vec<_>>>()
        .db()?;
    // Two statements rather than a direction spliced in: each is cached as written.
    let order = if query.newest_first {
        "ORDER BY approval_requested_at DESC, id DESC"
    } else {
        "ORDER BY approval_requested_at, id"
    };
    let tasks = conn
        .prepare_cached(&format!(
            "SELECT {} {MATCHING} {order} LIMIT :limit OFFSET :offset",
            task_columns!()
        ))
        .db()?
        .query_map(
            named_params! {
                ":tenant": tenant,
                ":action": action,
                ":before": before,
                ":limit": query.page_size() as i64,
                ":offset": i64::try_from(query.offset).unwrap_or(i64::MAX),
            },
            decode,
        )
        .db()?
        .collect::<rusqlite::Result<Vec<Task>>>()
        .db()?;
    Ok(WaitingPage {
        tasks,
        waiting: waiting.max(0) as u64,
        matching: matching.max(0) as u64,
        actions,
    })
}
