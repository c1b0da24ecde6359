//! The read side: load, the tool journal, steps, listing and existence; one statement each.

use super::PostgresStore;
use super::error::db;
use super::rows::{signed, snapshot, summary, tool_record, unsigned};
use super::sql;
use crate::domain::{CheckpointSummary, RunKey, Step, ToolRecord};
use crate::error::Result;
use crate::store::{Snapshot, Which};

impl PostgresStore {
    /// One statement, so one round trip and one snapshot: the checkpoint, the messages it
    /// covers and the tool journal can never come from different moments.
    pub(super) async fn load_snapshot(
        &self,
        run: &RunKey,
        which: Which,
    ) -> Result<Option<Snapshot>> {
        let (query, step) = match which {
            // "Below" is exclusive; the statement takes an inclusive bound, which also lets
            // "no bound" be i64::MAX without excluding any step a client can send.
            Which::LatestBelow(None) => (sql::LOAD_LATEST, i64::MAX),
            Which::LatestBelow(Some(below)) if below.get() == 0 => return Ok(None),
            Which::LatestBelow(Some(below)) => (sql::LOAD_LATEST, below.as_i64() - 1),
            Which::At(step) => (sql::LOAD_AT, step.as_i64()),
        };
        let client = self.client().await?;
        let statement = client.prepare_cached(query).await.map_err(db)?;
        let row = client
            .query_opt(
                &statement,
                &[&run.tenant.as_str(), &run.run_id.as_str(), &step],
            )
            .await
            .map_err(db)?;
        row.map(|row| snapshot(&row, run)).transpose()
    }

    pub(super) async fn tool_journal(&self, run: &RunKey) -> Result<Vec<ToolRecord>> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::TOOLS).await.map_err(db)?;
        client
            .query(&statement, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
            .iter()
            .map(tool_record)
            .collect()
    }

    pub(super) async fn checkpoint_steps(&self, run: &RunKey) -> Result<Vec<Step>> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::STEPS).await.map_err(db)?;
        Ok(client
            .query(&statement, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
            .iter()
            .map(|row| Step::new(unsigned(row.get(0))))
            .collect())
    }

    pub(super) async fn list_page(
        &self,
        run: &RunKey,
        after: Option<Step>,
        limit: usize,
    ) -> Result<Vec<CheckpointSummary>> {
        // Steps are never negative, so -1 means "from the start".
        let after = after.map_or(-1, Step::as_i64);
        let limit = signed(limit as u64);
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::LIST).await.map_err(db)?;
        Ok(client
            .query(
                &statement,
                &[&run.tenant.as_str(), &run.run_id.as_str(), &after, &limit],
            )
            .await
            .map_err(db)?
            .iter()
            .map(summary)
            .collect())
    }

    pub(super) async fn exists(&self, run: &RunKey) -> Result<bool> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::RUN_EXISTS).await.map_err(db)?;
        Ok(client
            .query_one(&statement, &[&run.tenant.as_str(), &run.run_id.as_str()])
            .await
            .map_err(db)?
            .get(0))
    }
}
