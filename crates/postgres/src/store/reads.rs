//! The read side: load, the tool journal, steps, listing and existence; one statement each.

use tokio_postgres::types::ToSql;

use super::PostgresStore;
use super::rows::{
    bare_snapshot, digest_or_zero, run_info, signed, snapshot, summary, tool_record, unsigned,
};
use super::sql;
use crate::error::db;
use checkpointd_core::domain::{
    CheckpointSummary, Checksum, Epoch, JournalScope, ListQuery, MessageWindow, RunId, RunInfo,
    RunKey, Step, Tenant, ToolChain, ToolRecord, prefix_upper_bound,
};
use checkpointd_core::error::Result;
use checkpointd_storage::store::{CheckpointHead, LatestHead, Snapshot, Which};

impl PostgresStore {
    /// One statement, so one round trip and one snapshot: the checkpoint, the messages it
    /// covers and the tool journal can never come from different moments.
    ///
    /// When the cached run row says the run has no messages and no tool results, a lighter
    /// statement reads the checkpoint alone (`sql::LOAD_LATEST_BARE`). Should its answer show
    /// that there is more (say, another instance journalled a tool result since), the full
    /// statement runs after all, so every answer still comes from one snapshot.
    pub(super) async fn load_snapshot(
        &self,
        run: &RunKey,
        which: Which,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Result<Option<Snapshot>> {
        let (full, bare, step) = match which {
            // "Below" is exclusive; the statement takes an inclusive bound, which also lets
            // "no bound" be i64::MAX without excluding any step a client can send.
            Which::LatestBelow(None) => (sql::LOAD_LATEST, sql::LOAD_LATEST_BARE, i64::MAX),
            Which::LatestBelow(Some(below)) if below.get() == 0 => return Ok(None),
            Which::LatestBelow(Some(below)) => {
                (sql::LOAD_LATEST, sql::LOAD_LATEST_BARE, below.as_i64() - 1)
            }
            Which::At(step) => (sql::LOAD_AT, sql::LOAD_AT_BARE, step.as_i64()),
        };
        let params: [&(dyn ToSql + Sync); 3] = [&run.tenant.as_str(), &run.run_id.as_str(), &step];
        let client = self.client().await?;
        let bare_likely = self
            .cache
            .get(run)
            .is_some_and(|cached| cached.head.messages.len == 0 && cached.head.tools.len == 0);
        if bare_likely {
            let statement = self.statements.prepare(&client, bare).await.map_err(db)?;
            let Some(row) = statement.query_opt(&client, &params).await.map_err(db)? else {
                return Ok(None);
            };
            if let Some(snapshot) = bare_snapshot(&row, run) {
                return Ok(Some(snapshot));
            }
        }
        let offset = signed(window.offset);
        let max_bytes = i64::try_from(window.max_bytes).unwrap_or(i64::MAX);
        let journal: i32 = match journal {
            JournalScope::All => 0,
            JournalScope::Step => 1,
            JournalScope::None => 2,
        };
        let params: [&(dyn ToSql + Sync); 6] = [
            params[0], params[1], params[2], &offset, &max_bytes, &journal,
        ];
        let statement = self.statements.prepare(&client, full).await.map_err(db)?;
        let row = statement.query_opt(&client, &params).await.map_err(db)?;
        row.map(|row| snapshot(&row, run)).transpose()
    }

    /// See [`checkpointd_storage::store::CheckpointStore::window_stops_short`]: one statement
    /// over the stored sizes, no message body read.
    pub(super) async fn stops_short(
        &self,
        run: &RunKey,
        which: Which,
        window: MessageWindow,
    ) -> Result<Option<Step>> {
        let (sql, step) = match which {
            Which::LatestBelow(None) => (sql::LATEST_WINDOW_STOPS_SHORT, i64::MAX),
            Which::LatestBelow(Some(below)) if below.get() == 0 => return Ok(None),
            Which::LatestBelow(Some(below)) => (sql::LATEST_WINDOW_STOPS_SHORT, below.as_i64() - 1),
            Which::At(step) => (sql::WINDOW_AT_STOPS_SHORT, step.as_i64()),
        };
        let offset = signed(window.offset);
        let max_bytes = i64::try_from(window.max_bytes).unwrap_or(i64::MAX);
        let params: [&(dyn ToSql + Sync); 5] = [
            &run.tenant.as_str(),
            &run.run_id.as_str(),
            &step,
            &offset,
            &max_bytes,
        ];
        let client = self.client().await?;
        let row = self
            .statements
            .query_opt(&client, sql, &params)
            .await
            .map_err(db)?;
        Ok(row.map(|row| Step::new(unsigned(row.get(0)))))
    }

    pub(super) async fn tool_journal(&self, run: &RunKey) -> Result<Vec<ToolRecord>> {
        let client = self.client().await?;
        let statement = self
            .statements
            .prepare(&client, sql::TOOLS)
            .await
            .map_err(db)?;
        statement
            .query(&client, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
            .iter()
            .map(tool_record)
            .collect()
    }

    pub(super) async fn checkpoint_steps(&self, run: &RunKey) -> Result<Vec<Step>> {
        let client = self.client().await?;
        let statement = self
            .statements
            .prepare(&client, sql::STEPS)
            .await
            .map_err(db)?;
        Ok(statement
            .query(&client, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
            .iter()
            .map(|row| Step::new(unsigned(row.get(0))))
            .collect())
    }

    pub(super) async fn list_page(
        &self,
        run: &RunKey,
        query: &ListQuery,
    ) -> Result<Vec<CheckpointSummary>> {
        // Steps are never negative and below i64::MAX, so -1 and i64::MAX mean "no bound".
        let above = query.above.map_or(-1, Step::as_i64);
        let below = query.below.map_or(i64::MAX, Step::as_i64);
        let limit = signed(query.limit as u64);
        let sql = match (query.descending, query.metadata.is_empty()) {
            (false, true) => sql::LIST,
            (true, true) => sql::LIST_DESCENDING,
            (false, false) => sql::LIST_MATCHING,
            (true, false) => sql::LIST_MATCHING_DESCENDING,
        };
        let keys: Vec<&str> = query.metadata.keys().map(String::as_str).collect();
        let values: Vec<&str> = query.metadata.values().map(String::as_str).collect();
        let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&tenant, &run_id, &above, &below, &limit];
        if !query.metadata.is_empty() {
            params.extend([&keys as &(dyn ToSql + Sync), &values]);
        }
        let client = self.client().await?;
        let statement = self.statements.prepare(&client, sql).await.map_err(db)?;
        Ok(statement
            .query(&client, &params)
            .await
            .map_err(db)?
            .iter()
            .map(summary)
            .collect())
    }

    pub(super) async fn step_of_label(&self, run: &RunKey, label: &str) -> Result<Option<Step>> {
        let client = self.client().await?;
        let statement = self
            .statements
            .prepare(&client, sql::LABEL_STEP)
            .await
            .map_err(db)?;
        Ok(statement
            .query_opt(
                &client,
                &[&run.tenant.as_str(), &run.run_id.as_str(), &label],
            )
            .await
            .map_err(db)?
            .map(|row| Step::new(unsigned(row.get(0)))))
    }

    pub(super) async fn read_run_info(&self, run: &RunKey) -> Result<Option<RunInfo>> {
        let client = self.client().await?;
        let statement = self
            .statements
            .prepare(&client, sql::RUN_INFO_ONE)
            .await
            .map_err(db)?;
        statement
            .query_opt(&client, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
            .map(|row| run_info(&row))
            .transpose()
    }

    pub(super) async fn run_page(
        &self,
        tenant: &Tenant,
        prefix: &str,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<RunInfo>> {
        // The empty string sorts before every run id: "after nothing".
        let after = after.map_or("", RunId::as_str);
        let limit = signed(limit as u64);
        let bound = prefix_upper_bound(prefix);
        let client = self.client().await?;
        let rows = match &bound {
            Some(bound) => {
                let statement = self
                    .statements
                    .prepare(&client, sql::RUN_INFO_PAGE_BOUNDED)
                    .await
                    .map_err(db)?;
                statement
                    .query(&client, &[&tenant.as_str(), &prefix, &after, &limit, bound])
                    .await
            }
            None => {
                let statement = self
                    .statements
                    .prepare(&client, sql::RUN_INFO_PAGE)
                    .await
                    .map_err(db)?;
                statement
                    .query(&client, &[&tenant.as_str(), &prefix, &after, &limit])
                    .await
            }
        }
        .map_err(db)?;
        rows.iter().map(run_info).collect()
    }

    pub(super) async fn read_latest_head(&self, run: &RunKey) -> Result<Option<LatestHead>> {
        let client = self.client().await?;
        let statement = self
            .statements
            .prepare(&client, sql::LATEST_HEAD)
            .await
            .map_err(db)?;
        let Some(row) = statement
            .query_opt(&client, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
        else {
            return Ok(None);
        };
        let checkpoint = row.get::<_, Option<i64>>(2).map(|step| CheckpointHead {
            step: Step::new(unsigned(step)),
            id: row.get(3),
            epoch: Epoch::new(unsigned(row.get(4))),
            checksum: Checksum::from_bytes(digest_or_zero(row.get(5))),
        });
        Ok(Some(LatestHead {
            checkpoint,
            tools: ToolChain {
                len: unsigned(row.get(0)),
                head: digest_or_zero(row.get(1)),
            },
            has_newer: row.get(6),
        }))
    }

    pub(super) async fn exists(&self, run: &RunKey) -> Result<bool> {
        let client = self.client().await?;
        let statement = self
            .statements
            .prepare(&client, sql::RUN_EXISTS)
            .await
            .map_err(db)?;
        Ok(statement
            .query_one(&client, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
            .get(0))
    }
}
