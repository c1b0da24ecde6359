//! RecordToolResult: the same two paths as Save, around `plan::plan_tool_result`.

use tokio_postgres::types::ToSql;

use super::head_cache::CachedRun;
use super::rows::{RunRow, signed, tool_record, whole_micros};
use super::sql;
use super::{Locked, PostgresStore};
use crate::error::{db, is_unique_violation};
use crate::statements::Statements;
use checkpointd_core::domain::{NewToolResult, RunKey, ToolChain, ToolRecord};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::{self, RunHead, StoredCall, ToolPlan};

impl PostgresStore {
    pub(super) async fn journal_tool_result(
        &self,
        request: &NewToolResult,
    ) -> Result<(ToolRecord, bool)> {
        let mut client = self.client().await?;
        let cached = self.cache.get(&request.run);
        if let Some(cached) = cached
            && let Some(record) = self.fast_tool(&client, request, cached).await?
        {
            return Ok((record, false));
        }
        self.locked_tool(&mut client, request, cached).await
    }

    /// Journals from the cached run row in one conditional statement; `Ok(None)` means "take
    /// the locked path" (cache stale, call id already journalled, or a rejection to confirm).
    async fn fast_tool(
        &self,
        client: &deadpool_postgres::Client,
        request: &NewToolResult,
        cached: CachedRun,
    ) -> Result<Option<ToolRecord>> {
        let Ok(ToolPlan::Insert(record, tools)) =
            plan::plan_tool_result(request, &cached.head, StoredCall::default())
        else {
            return Ok(None);
        };
        let record = ToolRecord {
            recorded_at: whole_micros(record.recorded_at),
            ..record
        };
        let statement = self
            .statements
            .prepare(client, sql::WRITE_TOOL)
            .await
            .map_err(db)?;
        let row = match statement
            .query_opt(
                client,
                &write_params(&request.run, &record, tools, &cached).params(),
            )
            .await
        {
            Ok(Some(row)) => row,
            Ok(None) => return Ok(None),
            // The call id is journalled already: the locked path returns the stored record.
            Err(error) if is_unique_violation(&error) => return Ok(None),
            Err(error) => return Err(db(error)),
        };
        self.cache.put(
            &request.run,
            CachedRun {
                head: RunHead {
                    tools,
                    ..cached.head
                },
                updated_at: row.get(0),
                // Unchanged: the statement matched the cached version, so nothing came between.
                latest_step: cached.latest_step,
            },
        );
        Ok(Some(record))
    }

    async fn locked_tool(
        &self,
        client: &mut deadpool_postgres::Client,
        request: &NewToolResult,
        cached: Option<CachedRun>,
    ) -> Result<(ToolRecord, bool)> {
        let tx = client.transaction().await.map_err(db)?;
        let outcome = tool_under_lock(&self.statements, &tx, request, cached).await;
        self.finish(tx, &request.run, outcome).await
    }
}

/// Everything between BEGIN and COMMIT of a locked RecordToolResult.
async fn tool_under_lock(
    statements: &Statements,
    tx: &deadpool_postgres::Transaction<'_>,
    request: &NewToolResult,
    cached: Option<CachedRun>,
) -> Result<Locked<(ToolRecord, bool)>> {
    let run = &request.run;
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let call_id = request.call_id.as_str();
    let (ensure, lock, by_call_id, write) = tokio::try_join!(
        statements.prepare(tx, sql::ENSURE_RUN),
        statements.prepare(tx, sql::LOCK_RUN),
        statements.prepare(tx, sql::JOURNAL_BY_CALL_ID),
        statements.prepare(tx, sql::WRITE_TOOL),
    )
    .map_err(db)?;
    let run_params: [&(dyn ToSql + Sync); 2] = [&tenant, &run_id];
    let call_params: [&(dyn ToSql + Sync); 3] = [&tenant, &run_id, &call_id];
    let (_, locked, existing) = tokio::try_join!(
        ensure.execute(tx, &run_params),
        lock.query_opt(tx, &run_params),
        by_call_id.query(tx, &call_params),
    )
    .map_err(db)?;
    let Some(locked) = locked else {
        return Err(Error::unavailable(format!(
            "run {run} was deleted while a tool result waited for it"
        )));
    };
    let locked = RunRow::decode(&locked, run)?;
    let existing = StoredCall::of(
        existing
            .iter()
            .map(tool_record)
            .collect::<Result<Vec<_>>>()?,
    );
    // The cached latest step still holds only if no write came between it and this lock.
    let latest_step = cached
        .filter(|cached| cached.updated_at == locked.updated_at)
        .and_then(|cached| cached.latest_step);
    let truth = CachedRun {
        head: locked.head,
        updated_at: locked.updated_at,
        latest_step,
    };
    let (record, tools) = match plan::plan_tool_result(request, &locked.head, existing) {
        Ok(ToolPlan::Insert(record, tools)) => (record, tools),
        Ok(ToolPlan::Existing(record)) => {
            return Ok(Locked::Release(Ok((record, true)), Some(truth)));
        }
        Err(error) => return Ok(Locked::Release(Err(error), Some(truth))),
    };
    let record = ToolRecord {
        recorded_at: whole_micros(record.recorded_at),
        ..record
    };
    let written = write
        .query_opt(tx, &write_params(run, &record, tools, &truth).params())
        .await
        .map_err(db)?
        .ok_or_else(|| Error::internal(format!("run {run} changed under its row lock")))?;
    Ok(Locked::Commit(
        (record, false),
        Some(CachedRun {
            head: RunHead {
                tools,
                ..locked.head
            },
            updated_at: written.get(0),
            latest_step,
        }),
    ))
}

/// The parameters of `sql::WRITE_TOOL`.
struct WriteParams<'a> {
    tenant: &'a str,
    run_id: &'a str,
    call_id: &'a str,
    record: &'a ToolRecord,
    step: i64,
    chain: &'a [u8],
    seq: i64,
    epoch: i64,
    expected_count: i64,
    expected_head: &'a [u8],
    expected_version: std::time::SystemTime,
    arguments_digest: &'a str,
}

/// `expected` is the run row the plan was made from; the statement applies only to it.
fn write_params<'a>(
    run: &'a RunKey,
    record: &'a ToolRecord,
    tools: ToolChain,
    expected: &'a CachedRun,
) -> WriteParams<'a> {
    WriteParams {
        tenant: run.tenant.as_str(),
        run_id: run.run_id.as_str(),
        call_id: record.call_id.as_str(),
        record,
        step: record.step.as_i64(),
        chain: &record.chain,
        seq: signed(tools.len),
        epoch: signed(expected.head.epoch.get()),
        expected_count: signed(expected.head.tools.len),
        expected_head: &expected.head.tools.head,
        expected_version: expected.updated_at,
        arguments_digest: record.arguments_digest.as_str(),
    }
}

impl WriteParams<'_> {
    fn params(&self) -> [&(dyn ToSql + Sync); 15] {
        [
            &self.tenant,
            &self.run_id,
            &self.call_id,
            &self.record.tool_name,
            &self.step,
            &self.record.output,
            &self.record.is_error,
            &self.chain,
            &self.seq,
            &self.record.recorded_at,
            &self.epoch,
            &self.expected_count,
            &self.expected_head,
            &self.expected_version,
            &self.arguments_digest,
        ]
    }
}
