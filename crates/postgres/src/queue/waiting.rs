//! The approval inbox's page on Postgres ([`TaskQueue::list_waiting`]): the filters, order and
//! page in SQL, with a count of every waiting task, of the matching ones, and per action.
//!
//! [`TaskQueue::list_waiting`]: checkpointd_storage::queue::TaskQueue::list_waiting

use std::time::SystemTime;

use super::task_row::decode;
use crate::PostgresStore;
use crate::error::db;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::Result;
use checkpointd_core::time::whole_micros;
use checkpointd_storage::queue::{MAX_ACTION_COUNTS, WaitingPage, WaitingQuery};
use checkpointd_storage::task_columns;

/// The rows a query's filters match ($1 tenant, $2 action, $3 requested at or before); the
/// unset ones (NULL) match everything.
macro_rules! matching {
    () => {
        " FROM tasks WHERE tenant = $1 AND state = 'input_required' \
         AND ($2::text IS NULL OR approval_action = $2::text) \
         AND ($3::timestamptz IS NULL OR approval_requested_at <= $3::timestamptz)"
    };
}

const WAITING: &str = "SELECT count(*) FROM tasks WHERE tenant = $1 AND state = 'input_required'";

const MATCHING: &str = concat!("SELECT count(*)", matching!());

const ACTIONS: &str = "SELECT approval_action, count(*) AS n FROM tasks \
     WHERE tenant = $1 AND state = 'input_required' \
     GROUP BY approval_action ORDER BY n DESC, approval_action LIMIT $2";

// One statement per direction rather than a direction spliced in: each is prepared as written.
const OLDEST_FIRST: &str = concat!(
    "SELECT ",
    task_columns!(),
    matching!(),
    " ORDER BY approval_requested_at, id LIMIT $4 OFFSET $5"
);

const NEWEST_FIRST: &str = concat!(
    "SELECT ",
    task_columns!(),
    matching!(),
    " ORDER BY approval_requested_at DESC, id DESC LIMIT $4 OFFSET $5"
);

pub(super) async fn list_waiting(
    store: &PostgresStore,
    tenant: &Tenant,
    query: &WaitingQuery,
) -> Result<WaitingPage> {
    let client = store.client().await?;
    let tenant = tenant.as_str();
    let action = query.action.as_deref();
    let before: Option<SystemTime> = query.requested_before.map(whole_micros);
    let count = |row: &tokio_postgres::Row| -> Result<u64> {
        Ok(row.try_get::<_, i64>(0).map_err(db)?.max(0) as u64)
    };
    let statement = store
        .statements
        .prepare(&client, WAITING)
        .await
        .map_err(db)?;
    let waiting = count(&statement.query_one(&client, &[&tenant]).await.map_err(db)?)?;
    let statement = store
        .statements
        .prepare(&client, MATCHING)
        .await
        .map_err(db)?;
    let matching = count(
        &statement
            .query_one(&client, &[&tenant, &action, &before])
            .await
            .map_err(db)?,
    )?;
    let statement = store
        .statements
        .prepare(&client, ACTIONS)
        .await
        .map_err(db)?;
    let actions = statement
        .query(&client, &[&tenant, &(MAX_ACTION_COUNTS as i64)])
        .await
        .map_err(db)?
        .iter()
        .map(|row| {
            let action: Option<String> = row.try_get(0).map_err(db)?;
            let n: i64 = row.try_get(1).map_err(db)?;
            Ok((action.unwrap_or_default(), n.max(0) as u64))
        })
        .collect::<Result<Vec<_>>>()?;
    let page = if query.newest_first {
        NEWEST_FIRST
    } else {
        OLDEST_FIRST
    };
    let limit = query.page_size() as i64;
    let offset = i64::try_from(query.offset).unwrap_or(i64::MAX);
    let statement = store.statements.prepare(&client, page).await.map_err(db)?;
    let tasks = statement
        .query(&client, &[&tenant, &action, &before, &limit, &offset])
        .await
        .map_err(db)?
        .iter()
        .map(decode)
        .collect::<Result<Vec<_>>>()?;
    Ok(WaitingPage {
        tasks,
        waiting,
        matching,
        actions,
    })
}
