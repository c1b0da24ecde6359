//! Resume: fence older writers, restore the latest valid checkpoint, rewind the log; and
//! before any of it, every refusal this caller would get (an older client's calls in doubt, an
//! answer too large for a client that does not page), so a refused Resume leaves the run as
//! it was: same epoch, same log, nothing quarantined on its behalf.

use checkpointd_core::domain::{
    JournalDiagnosis, JournalScope, MessageChain, MessageWindow, PassedOver, Resumed, RunKey,
    ToolRecord,
};
use checkpointd_core::error::{Error, Missing, Result};
use checkpointd_storage::store::Which;

use super::checkpoints::{DamagedJournal, Engine};
use super::unpaged::answer_too_large;

/// What a Resume may do besides recovering.
#[derive(Clone, Copy, Debug)]
pub struct ResumeOptions {
    /// Refuse (RUN_NOT_FOUND) instead of starting a run never seen.
    pub require_existing: bool,
    /// Leave the messages before this log position out of the answer.
    pub message_offset: u64,
    /// The caller reads calls in doubt (`CLIENT_CAPABILITY_IN_DOUBT_CALLS`). Without it a
    /// run with any is refused rather than restored past them: the caller could not see them
    /// and would run them again.
    pub in_doubt_calls: bool,
    /// The most message bytes the answer carries; the rest is left for a continuation.
    pub max_message_bytes: usize,
    /// The caller does not follow continuations: an answer whose messages do not fit
    /// `max_message_bytes` is refused (ANSWER_TOO_LARGE), never cut short.
    pub whole_answer: bool,
}

impl Default for ResumeOptions {
    fn default() -> Self {
        Self {
            require_existing: false,
            message_offset: 0,
            in_doubt_calls: false,
            max_message_bytes: usize::MAX,
            whole_answer: false,
        }
    }
}

impl Engine {
    /// Recovery: fence older writers, restore the latest valid checkpoint, rewind the log.
    ///
    /// A corrupt journal entry does not fail it: the restored checkpoint is the newest that
    /// does not cover the entry, and the entry's call is reported in doubt, never re-run
    /// silently.
    pub async fn resume(&self, run: &RunKey) -> Result<Resumed> {
        let options = ResumeOptions {
            in_doubt_calls: true,
            ..ResumeOptions::default()
        };
        self.resume_with(run, options).await
    }

    /// [`Self::resume`], refusing an unknown run when asked to and leaving out the messages
    /// before `message_offset` from the answer (never from the rewind).
    pub async fn resume_with(&self, run: &RunKey, options: ResumeOptions) -> Result<Resumed> {
        if options.require_existing && !self.store.run_exists(run).await? {
            return Err(Error::NotFound(Missing::RunToResume {
                run_id: run.run_id.to_string(),
            }));
        }
        let window = MessageWindow::new(options.message_offset, options.max_message_bytes);
        self.refuse_before_fencing(run, &options, window).await?;
        self.resume_verified(run, &options, window).await
    }

    /// The refusals of a Resume, decided before the epoch moves; each only for a caller that
    /// lacks the capability, so a current client pays nothing for them. The answer's size comes
    /// from stored sizes ([`checkpointd_storage::store::CheckpointStore::window_stops_short`])
    /// of the latest checkpoint that is not quarantined: the one restored unless it turns out
    /// corrupt, and an earlier one's log is a prefix of its, never longer. So a corrupt latest
    /// checkpoint too large for the caller is refused as too large rather than passed over
    /// (Validate or the scrub quarantines it; a paging client passes over it).
    async fn refuse_before_fencing(
        &self,
        run: &RunKey,
        options: &ResumeOptions,
        window: MessageWindow,
    ) -> Result<()> {
        if !options.in_doubt_calls {
            refuse_calls_in_doubt(run, &self.store.tools(run).await?)?;
        }
        if options.whole_answer {
            self.refuse_unpaged_overflow(run, Which::LatestBelow(None), window)
                .await?;
        }
        Ok(())
    }

    async fn resume_verified(
        &self,
        run: &RunKey,
        options: &ResumeOptions,
        window: MessageWindow,
    ) -> Result<Resumed> {
        // The epoch goes up first, so nothing an older owner writes from here on can land.
        let epoch = self.store.begin_resume(run).await?;
        // Resume returns the whole journal, so it reads and verifies it whole.
        let (found, _) = self
            .latest_valid(run, DamagedJournal::FallBack, window, JournalScope::All)
            .await?;
        let restored_step = found.as_ref().map(|snapshot| snapshot.checkpoint.step);
        let passed_over = self.quarantined_above(run, restored_step).await?;
        let skipped_steps = PassedOver::steps(&passed_over);
        let (checkpoint, journal) = match found {
            Some(snapshot) => (Some(snapshot.checkpoint), snapshot.tools),
            None => (None, self.store.tools(run).await?),
        };
        // The same refusals again, on what was read after the fence: a writer of the old epoch
        // may have journalled an intent or saved a longer log between the checks above and the
        // fence. Then the epoch has moved, but the caller still never gets a journal or a
        // history it cannot represent; the rewind is not done.
        if !options.in_doubt_calls {
            refuse_calls_in_doubt(run, &journal)?;
        }
        if let Some(checkpoint) = checkpoint.as_ref().filter(|_| options.whole_answer)
            && checkpoint.continues()
        {
            return Err(answer_too_large(checkpoint.step, window));
        }
        let diagnosis = JournalDiagnosis::of(&journal);
        let corrupt_call_ids = diagnosis.corrupt_call_ids();
        if !corrupt_call_ids.is_empty() {
            tracing::warn!(
                run_id = %run.run_id,
                tenant = %run.tenant,
                corrupt = ?corrupt_call_ids,
                "tool journal has corrupt entries; their calls are in doubt"
            );
        }
        let chain = match &checkpoint {
            // Verified already, so the chain is the one the checksum covers.
            Some(checkpoint) => checkpoint.covered_messages().map_err(Error::DataLoss)?,
            None => MessageChain::EMPTY,
        };
        self.store.rewind(run, epoch, chain).await?;
        tracing::info!(
            run_id = %run.run_id,
            tenant = %run.tenant,
            epoch = epoch.get(),
            recovered_from_step = checkpoint.as_ref().map(|c| c.step.get()),
            skipped = skipped_steps.len(),
            "run resumed"
        );
        crate::telemetry::metrics::record_recovery(checkpoint.is_some());
        Ok(Resumed {
            checkpoint,
            skipped_steps,
            passed_over,
            tool_results: diagnosis.sound,
            epoch,
            in_doubt: diagnosis.in_doubt,
            corrupt_call_ids,
        })
    }
}

/// The old, safe answer for a Resume that does not declare it reads calls in doubt, decided
/// before the epoch moves and anything is quarantined or rewound: a corrupt journal entry is DATA_LOSS, as it was
/// before Resume could restore past one; an intent without a result is refused too, since
/// such a client would run the call again, and only an operator's repair or a client that
/// declares the capability may settle it.
fn refuse_calls_in_doubt(run: &RunKey, journal: &[ToolRecord]) -> Result<()> {
    let diagnosis = JournalDiagnosis::of(journal);
    let corrupt = diagnosis.corrupt_call_ids();
    if !corrupt.is_empty() {
        return Err(Error::DataLoss(format!(
            "the tool journal of run {} has corrupt entries (calls {}); settle them with \
             RepairJournal, or resume with capability CLIENT_CAPABILITY_IN_DOUBT_CALLS",
            run.run_id,
            corrupt.join(", ")
        )));
    }
    if let Some(call) = diagnosis.in_doubt.first() {
        return Err(Error::CapabilityRequired {
            capability: "CLIENT_CAPABILITY_IN_DOUBT_CALLS",
            message: format!(
                "run {} has {} call(s) in doubt (first: {}); resume with capability \
                 CLIENT_CAPABILITY_IN_DOUBT_CALLS or settle them with RepairJournal",
                run.run_id,
                diagnosis.in_doubt.len(),
                call.call_id.as_str()
            ),
        });
    }
    Ok(())
}
