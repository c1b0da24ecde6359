//! Tool intents, the operator's view of a run's journal, and its repairs, on top of the
//! engine's store. Repairs are planned by [`checkpointd_core::plan::plan_repair`].

use std::time::SystemTime;

use super::Engine;
use checkpointd_core::domain::{
    IntentOutcome, JournalAction, JournalDiagnosis, JournalRepair, NewToolIntent, RunKey, Step,
    ToolRecord,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::plan_repair;

/// A run's journal as an operator sees it.
#[derive(Clone, Debug)]
pub struct JournalView {
    /// Every entry, results and intents, in journal order.
    pub entries: Vec<ToolRecord>,
    pub diagnosis: JournalDiagnosis,
    /// Every repair made so far, oldest first.
    pub actions: Vec<JournalAction>,
}

impl Engine {
    pub async fn record_tool_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome> {
        self.store.record_tool_intent(intent).await
    }

    /// The run's whole journal with its diagnosis; `NotFound` for an unknown run.
    pub async fn journal(&self, run: &RunKey) -> Result<JournalView> {
        if !self.store.run_exists(run).await? {
            return Err(Error::run_not_found(&run.run_id));
        }
        let entries = self.store.tools(run).await?;
        let diagnosis = JournalDiagnosis::of(&entries);
        let actions = self.store.journal_actions(run).await?;
        Ok(JournalView {
            entries,
            diagnosis,
            actions,
        })
    }

    /// Settles one call by an operator's decision; returns the recorded action and the steps
    /// quarantined because they covered the journal as it was.
    pub async fn repair_journal(
        &self,
        repair: &JournalRepair,
        now: SystemTime,
    ) -> Result<(JournalAction, Vec<Step>)> {
        let run = &repair.run;
        let head_before = self.store.latest_head(run).await?;
        let entries = self.store.tools(run).await?;
        let head_after = self.store.latest_head(run).await?;
        let (Some(before), Some(after)) = (head_before, head_after) else {
            return Err(Error::run_not_found(&run.run_id));
        };
        // The journal and its head come from two reads; the store applies the rewrite only to
        // the head it was planned from, and this makes sure that head goes with these entries.
        if before.tools != after.tools {
            return Err(Error::JournalState(format!(
                "the tool journal of run {} changed while it was read; repeat the repair",
                run.run_id
            )));
        }
        let rewrite = plan_repair(&entries, after.tools, repair, now)?;
        let quarantined = self.store.rewrite_journal(&rewrite).await?;
        tracing::warn!(
            run_id = %run.run_id,
            tenant = %run.tenant,
            call_id = %repair.call_id,
            action = %rewrite.action.action,
            actor = %rewrite.action.actor,
            quarantined = quarantined.len(),
            "tool journal repaired by an operator"
        );
        Ok((rewrite.action, quarantined))
    }
}
