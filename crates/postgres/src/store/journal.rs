//! Tool intents and journal repairs on Postgres. Both are rare next to Saves and results, so
//! they always take the run lock (no fast path) and drop the run's cached head afterwards.

use tokio_postgres::types::ToSql;

use super::PostgresStore;
use super::rows::{RunRow, signed, tool_record, unsigned, whole_micros};
use super::sql;
use crate::error::db;
use crate::statements::Statements;
use checkpointd_core::domain::ToolRecord;
use checkpointd_core::domain::{
    EntryKind, IntentOutcome, JournalAction, NewToolIntent, RunKey, Step,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::{self, IntentPlan, JournalRewrite};

impl PostgresStore {
    pub(super) async fn journal_intent(&self, request: &NewToolIntent) -> Result<IntentOutcome> {
        let run = &request.run;
        let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
        let call_id = request.call_id.as_str();
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let run_params: [&(dyn ToSql + Sync); 2] = [&tenant, &run_id];
        self.statements
            .execute(&tx, sql::ENSURE_RUN, &run_params)
            .await
            .map_err(db)?;
        let locked = self
            .statements
            .query_opt(&tx, sql::LOCK_RUN, &run_params)
            .await
            .map_err(db)?
            .ok_or_else(|| Error::unavailable(format!("run {run} was deleted meanwhile")))?;
        let head = RunRow::decode(&locked, run)?.head;
        let entries = self
            .statements
            .query(&tx, sql::JOURNAL_BY_CALL_ID, &[&tenant, &run_id, &call_id])
            .await
            .map_err(db)?
            .iter()
            .map(tool_record)
            .collect::<Result<Vec<_>>>()?;
        let of_kind = |kind| entries.iter().find(|record| record.kind == kind).cloned();
        let plan = plan::plan_tool_intent(
            request,
            &head,
            of_kind(EntryKind::Intent),
            of_kind(EntryKind::Result),
        );
        let (record, tools) = match plan {
            Ok(IntentPlan::Insert(record, tools)) => (record, tools),
            Ok(IntentPlan::Existing(outcome)) => {
                tx.rollback().await.map_err(db)?;
                return Ok(outcome);
            }
            Err(error) => {
                tx.rollback().await.map_err(db)?;
                return Err(error);
            }
        };
        let record = ToolRecord {
            recorded_at: whole_micros(record.recorded_at),
            ..record
        };
        insert_entry(&self.statements, &tx, run, &record).await?;
        set_tool_head(&self.statements, &tx, run, tools.len, &tools.head).await?;
        tx.commit().await.map_err(db)?;
        self.cache.forget(run);
        Ok(IntentOutcome {
            intent: Some(record),
            result: None,
            already_recorded: false,
        })
    }

    pub(super) async fn journal_rewrite(&self, rewrite: &JournalRewrite) -> Result<Vec<Step>> {
        let run = &rewrite.run;
        let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let run_params: [&(dyn ToSql + Sync); 2] = [&tenant, &run_id];
        let Some(locked) = self
            .statements
            .query_opt(&tx, sql::LOCK_RUN, &run_params)
            .await
            .map_err(db)?
        else {
            return Err(Error::run_not_found(&run.run_id));
        };
        let head = RunRow::decode(&locked, run)?.head;
        if let Err(error) = plan::check_journal_unchanged(&rewrite.expected, &head.tools) {
            tx.rollback().await.map_err(db)?;
            return Err(error);
        }
        let from = signed(rewrite.from_seq);
        self.statements
            .execute(&tx, sql::TRUNCATE_JOURNAL, &[&tenant, &run_id, &from])
            .await
            .map_err(db)?;
        for record in &rewrite.entries {
            let record = ToolRecord {
                recorded_at: whole_micros(record.recorded_at),
                ..record.clone()
            };
            insert_entry(&self.statements, &tx, run, &record).await?;
        }
        set_tool_head(
            &self.statements,
            &tx,
            run,
            rewrite.head.len,
            &rewrite.head.head,
        )
        .await?;
        let mut quarantined = Vec::new();
        if let Some(covering) = rewrite.quarantine_from {
            let covering = signed(covering);
            let reason = rewrite.quarantine_reason();
            for row in self
                .statements
                .query(
                    &tx,
                    sql::QUARANTINE_COVERING,
                    &[
                        &tenant,
                        &run_id,
                        &covering,
                        &reason,
                        &rewrite.action.acted_at,
                    ],
                )
                .await
                .map_err(db)?
            {
                quarantined.push(Step::new(unsigned(row.get(0))));
            }
        }
        quarantined.sort();
        let action = &rewrite.action;
        self.statements
            .execute(
                &tx,
                sql::INSERT_JOURNAL_ACTION,
                &[
                    &tenant,
                    &run_id,
                    &action.call_id,
                    &action.action,
                    &action.actor,
                    &action.detail,
                    &action.acted_at,
                ],
            )
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        self.cache.forget(run);
        Ok(quarantined)
    }

    pub(super) async fn read_journal_actions(&self, run: &RunKey) -> Result<Vec<JournalAction>> {
        let client = self.client().await?;
        let rows = self
            .statements
            .query(
                &client,
                sql::JOURNAL_ACTIONS,
                &[&run.tenant.as_str(), &run.run_id.as_str()],
            )
            .await
            .map_err(db)?;
        Ok(rows
            .iter()
            .map(|row| JournalAction {
                call_id: row.get(0),
                action: row.get(1),
                actor: row.get(2),
                detail: row.get(3),
                acted_at: row.get(4),
            })
            .collect())
    }
}

async fn insert_entry(
    statements: &Statements,
    tx: &deadpool_postgres::Transaction<'_>,
    run: &RunKey,
    record: &ToolRecord,
) -> Result<()> {
    statements
        .execute(
            tx,
            sql::INSERT_JOURNAL_ENTRY,
            &[
                &run.tenant.as_str(),
                &run.run_id.as_str(),
                &signed(record.seq),
                &record.call_id.as_str(),
                &record.tool_name,
                &record.step.as_i64(),
                &record.output,
                &record.is_error,
                &record.chain.as_slice(),
                &record.recorded_at,
                &(record.kind == EntryKind::Intent),
                &record.arguments_digest.as_str(),
            ],
        )
        .await
        .map_err(db)?;
    Ok(())
}

async fn set_tool_head(
    statements: &Statements,
    tx: &deadpool_postgres::Transaction<'_>,
    run: &RunKey,
    len: u64,
    head: &[u8; 32],
) -> Result<()> {
    statements
        .execute(
            tx,
            sql::SET_TOOL_HEAD,
            &[
                &run.tenant.as_str(),
                &run.run_id.as_str(),
                &signed(len),
                &head.as_slice(),
            ],
        )
        .await
        .map_err(db)?;
    Ok(())
}
