//! RecordToolResults on Postgres: one locked transaction for the whole batch, in four round
//! trips whatever its size (begin; lock with the call ids' lookup; the inserts with the new
//! head; commit).

use std::time::SystemTime;

use tokio_postgres::types::ToSql;

use super::PostgresStore;
use super::head_cache::CachedRun;
use super::rows::{RunRow, signed, tool_record, whole_micros};
use super::sql;
use crate::error::db;
use checkpointd_core::domain::{NewToolResult, ToolRecord};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::{self, RunHead, StoredCall};

impl PostgresStore {
    pub(super) async fn journal_tool_results(
        &self,
        requests: &[NewToolResult],
    ) -> Result<Vec<(ToolRecord, bool)>> {
        let Some(first) = requests.first() else {
            return Ok(Vec::new());
        };
        let run = &first.run;
        let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
        let cached = self.cache.get(run);
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let (ensure, lock, by_call_ids, insert, set_head) = tokio::try_join!(
            self.statements.prepare(&tx, sql::ENSURE_RUN),
            self.statements.prepare(&tx, sql::LOCK_RUN),
            self.statements.prepare(&tx, sql::ENTRIES_BY_CALL_IDS),
            self.statements.prepare(&tx, sql::INSERT_RESULTS),
            self.statements.prepare(&tx, sql::SET_TOOL_HEAD_RETURNING),
        )
        .map_err(db)?;
        let call_ids: Vec<&str> = requests.iter().map(|r| r.call_id.as_str()).collect();
        let run_params: [&(dyn ToSql + Sync); 2] = [&tenant, &run_id];
        let call_params: [&(dyn ToSql + Sync); 3] = [&tenant, &run_id, &call_ids];
        let (_, locked, stored) = tokio::try_join!(
            ensure.execute(&tx, &run_params),
            lock.query_opt(&tx, &run_params),
            by_call_ids.query(&tx, &call_params),
        )
        .map_err(db)?;
        let Some(locked) = locked else {
            return Err(Error::unavailable(format!(
                "run {run} was deleted while tool results waited for it"
            )));
        };
        let locked = RunRow::decode(&locked, run)?;
        let stored = stored.iter().map(tool_record).collect::<Result<Vec<_>>>()?;
        let existing = requests
            .iter()
            .map(|request| {
                StoredCall::of(
                    stored
                        .iter()
                        .filter(|record| record.call_id == request.call_id)
                        .cloned(),
                )
            })
            .collect();
        // The cached latest step still holds only if no write came between it and the lock.
        let latest_step = cached
            .filter(|cached| cached.updated_at == locked.updated_at)
            .and_then(|cached| cached.latest_step);
        let plan = plan::plan_tool_results(requests, &locked.head, existing);
        let (mut plan, tools) = match plan {
            Ok(plan) if plan.tools.is_some() => {
                let tools = plan.tools.unwrap_or(locked.head.tools);
                (plan, tools)
            }
            answer => {
                // A rejection or an all-known batch writes nothing, not even the run row made
                // above; the row as read is the truth the fast path may start from.
                tx.rollback().await.map_err(db)?;
                self.cache.put(
                    run,
                    CachedRun {
                        head: locked.head,
                        updated_at: locked.updated_at,
                        latest_step,
                    },
                );
                return answer.map(|plan| plan.answers);
            }
        };
        plan.round_times(whole_micros);
        let columns = Columns::of(&plan.inserts);
        let (head, count) = (tools.head.as_slice(), signed(tools.len));
        let insert_params = columns.params(&tenant, &run_id);
        let head_params: [&(dyn ToSql + Sync); 4] = [&tenant, &run_id, &count, &head];
        let (_, written) = tokio::try_join!(
            insert.execute(&tx, &insert_params),
            set_head.query_one(&tx, &head_params),
        )
        .map_err(db)?;
        tx.commit().await.map_err(db)?;
        self.cache.put(
            run,
            CachedRun {
                head: RunHead {
                    tools,
                    ..locked.head
                },
                updated_at: written.get(0),
                latest_step,
            },
        );
        Ok(plan.answers)
    }
}

/// The batch's entries as the arrays `sql::INSERT_RESULTS` unnests.
struct Columns<'a> {
    seqs: Vec<i64>,
    call_ids: Vec<&'a str>,
    tool_names: Vec<&'a str>,
    steps: Vec<i64>,
    outputs: Vec<&'a [u8]>,
    is_errors: Vec<bool>,
    chains: Vec<&'a [u8]>,
    recorded_ats: Vec<SystemTime>,
    arguments_digests: Vec<&'a str>,
}

impl<'a> Columns<'a> {
    fn of(records: &'a [ToolRecord]) -> Self {
        Self {
            seqs: records.iter().map(|r| signed(r.seq)).collect(),
            call_ids: records.iter().map(|r| r.call_id.as_str()).collect(),
            tool_names: records.iter().map(|r| r.tool_name.as_str()).collect(),
            steps: records.iter().map(|r| r.step.as_i64()).collect(),
            outputs: records.iter().map(|r| r.output.as_slice()).collect(),
            is_errors: records.iter().map(|r| r.is_error).collect(),
            chains: records.iter().map(|r| r.chain.as_slice()).collect(),
            recorded_ats: records.iter().map(|r| r.recorded_at).collect(),
            arguments_digests: records
                .iter()
                .map(|r| r.arguments_digest.as_str())
                .collect(),
        }
    }

    fn params<'p>(&'p self, tenant: &'p &str, run_id: &'p &str) -> [&'p (dyn ToSql + Sync); 11] {
        [
            tenant,
            run_id,
            &self.seqs,
            &self.call_ids,
            &self.tool_names,
            &self.steps,
            &self.outputs,
            &self.is_errors,
            &self.chains,
            &self.recorded_ats,
            &self.arguments_digests,
        ]
    }
}
