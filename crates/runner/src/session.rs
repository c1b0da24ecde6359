//! One incarnation of a run: what Resume restored, the tool journal, and the saves since.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use checkpointd_protocol::checksum::{
    CheckpointContent, IntentEntry, MessageChain, ToolChain, ToolEntry, checkpoint_checksum, to_hex,
};
use tracing::Instrument as _;

use crate::agent_error::AgentError;
use crate::api::RunnerApi;
use crate::proto::{InDoubtCall, Message, ResumeResponse, SaveRequest, ToolIntent, ToolResult};
use crate::strategy::Strategy;

/// A human decision carried by the task, handed to the agent when it asks again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub action: String,
    pub approved: bool,
    pub decided_by: String,
    pub comment: String,
}

/// Per-run counters the runner reports.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub save_latencies: Vec<Duration>,
    pub save_bytes: Vec<usize>,
    pub tools_executed: u64,
    pub tools_replayed: u64,
}

/// Everything a session needs besides what Resume returned.
pub struct SessionSetup {
    pub api: Arc<dyn RunnerApi>,
    pub run_id: String,
    pub input: Vec<u8>,
    /// The state used when the run restarts from scratch.
    pub initial_state: Vec<u8>,
    pub strategy: Strategy,
    pub content_type: String,
    pub decision: Option<Decision>,
}

impl RunStats {
    /// Adds another incarnation's or task's counters to these.
    pub fn absorb(&mut self, more: RunStats) {
        self.save_latencies.extend(more.save_latencies);
        self.save_bytes.extend(more.save_bytes);
        self.tools_executed += more.tools_executed;
        self.tools_replayed += more.tools_replayed;
    }
}

/// The live state of a run between Resume and the end of the attempt.
pub struct Session {
    pub(crate) api: Arc<dyn RunnerApi>,
    pub(crate) run_id: String,
    pub(crate) input: Vec<u8>,
    pub(crate) epoch: u64,
    pub(crate) strategy: Strategy,
    pub(crate) content_type: String,
    /// The last step whose effects are in `state` and `messages`.
    pub(crate) completed_step: u64,
    pub(crate) state: Vec<u8>,
    pub(crate) messages: Vec<Message>,
    /// Length of the message log the service holds.
    pub(crate) saved_messages: usize,
    /// Checksum v1's chain over the first `saved_messages` messages.
    saved_chain: MessageChain,
    /// Checksum v1's chain over the whole tool journal in `seq` order; `None` when the journal
    /// this session saw has gaps, and the save then leaves the checksum to the server.
    tool_chain: Option<ToolChain>,
    pub(crate) last_saved_step: Option<u64>,
    pub(crate) journal: HashMap<String, ToolResult>,
    /// Journalled intents by call id, with their idempotency keys.
    pub(crate) intents: HashMap<String, ToolIntent>,
    /// Calls Resume reported in doubt, by call id: settled by their tool's policy.
    pub(crate) in_doubt: HashMap<String, InDoubtCall>,
    pub(crate) decision: Option<Decision>,
    pub(crate) stats: RunStats,
}

impl Session {
    /// Builds the session Resume describes.
    pub fn resumed(setup: SessionSetup, resumed: ResumeResponse) -> Self {
        let SessionSetup {
            api,
            run_id,
            input,
            initial_state,
            strategy,
            content_type,
            decision,
        } = setup;
        let tool_chain = journal_chain(&resumed.tool_results, &resumed.tool_intents);
        let journal = resumed
            .tool_results
            .into_iter()
            .map(|result| (result.call_id.clone(), result))
            .collect();
        let intents = resumed
            .tool_intents
            .into_iter()
            .map(|intent| (intent.call_id.clone(), intent))
            .collect();
        let in_doubt = resumed
            .in_doubt
            .into_iter()
            .map(|call| (call.call_id.clone(), call))
            .collect();
        let (completed_step, state, messages, last_saved_step) = match resumed.checkpoint {
            Some(checkpoint) => (
                checkpoint.step as u64,
                checkpoint.state,
                checkpoint.messages,
                Some(checkpoint.step as u64),
            ),
            None => (0, initial_state, Vec::new(), None),
        };
        let saved_chain = MessageChain::over(
            messages
                .iter()
                .map(|m| (m.role.as_str(), m.content.as_slice())),
        );
        Self {
            api,
            run_id,
            input,
            epoch: resumed.epoch,
            strategy,
            content_type,
            completed_step,
            saved_messages: messages.len(),
            saved_chain,
            tool_chain,
            state,
            messages,
            last_saved_step,
            journal,
            intents,
            in_doubt,
            decision,
            stats: RunStats::default(),
        }
    }

    /// Adds a result RecordToolResult just journalled; it extends the tool chain when it is the
    /// journal's next entry.
    pub(crate) fn journal_recorded(&mut self, recorded: ToolResult) {
        self.extend_chain(recorded.seq, JournalEntry::Result(&recorded));
        self.in_doubt.remove(&recorded.call_id);
        self.journal.insert(recorded.call_id.clone(), recorded);
    }

    /// Adds an intent RecordToolIntent just journalled, like [`Self::journal_recorded`].
    pub(crate) fn intent_recorded(&mut self, intent: ToolIntent) {
        self.extend_chain(intent.seq, JournalEntry::Intent(&intent));
        self.intents.insert(intent.call_id.clone(), intent);
    }

    fn extend_chain(&mut self, seq: u64, entry: JournalEntry<'_>) {
        self.tool_chain = self.tool_chain.and_then(|mut chain| {
            (seq == chain.len + 1).then(|| {
                entry.push_onto(&mut chain);
                chain
            })
        });
        if self.tool_chain.is_none() {
            tracing::debug!(run_id = %self.run_id, seq, "tool journal has a gap here; saves carry no client checksum");
        }
    }

    /// Saves `state` as the checkpoint of `step`, with the first `message_len` messages, and
    /// with the client's checksum v1 so the server verifies what the runner meant to save.
    pub(crate) async fn save(
        &mut self,
        step: u64,
        state: Vec<u8>,
        message_len: usize,
    ) -> Result<(), AgentError> {
        if self.last_saved_step == Some(step) {
            return Ok(());
        }
        let bytes = state.len();
        let new_messages = &self.messages[self.saved_messages..message_len];
        let mut chain = self.saved_chain;
        for message in new_messages {
            chain.push(&message.role, &message.content);
        }
        let metadata = BTreeMap::new();
        let checksum = self.tool_chain.map(|tools| {
            to_hex(&checkpoint_checksum(
                CheckpointContent {
                    run_id: &self.run_id,
                    step,
                    content_type: &self.content_type,
                    state: &state,
                },
                &metadata,
                &chain,
                &tools,
            ))
        });
        let request = SaveRequest {
            tool_count: None,
            run_id: self.run_id.clone(),
            step: step as i64,
            content_type: self.content_type.clone(),
            state,
            messages: new_messages.to_vec(),
            message_offset: self.saved_messages as u64,
            metadata: metadata.into_iter().collect(),
            epoch: Some(self.epoch),
            checksum,
            label: String::new(),
        };
        // The runner's side of the save: its latency includes the network, and the server's
        // span joins it through the traceparent the client sends.
        let span = tracing::info_span!(
            "checkpoint.save",
            otel.kind = "client",
            checkpoint.run_id = %self.run_id,
            checkpoint.step = step,
            checkpoint.bytes = bytes,
        );
        let started = Instant::now();
        self.api.save(request).instrument(span).await?;
        let latency = started.elapsed();
        checkpointd_telemetry::metrics::record_runner_save(latency);
        tracing::debug!(run_id = %self.run_id, step, bytes, latency_us = latency.as_micros() as u64, "checkpoint saved");
        self.stats.save_latencies.push(latency);
        self.stats.save_bytes.push(bytes);
        self.saved_messages = message_len;
        self.saved_chain = chain;
        self.last_saved_step = Some(step);
        Ok(())
    }

    /// Checkpoints the last completed step, unless it already is.
    pub(crate) async fn save_completed(&mut self) -> Result<(), AgentError> {
        if self.completed_step == 0 {
            return Ok(());
        }
        let state = self.state.clone();
        self.save(self.completed_step, state, self.messages.len())
            .await
    }
}

/// One journal entry as checksum v1 chains it.
enum JournalEntry<'a> {
    Result(&'a ToolResult),
    Intent(&'a ToolIntent),
}

impl JournalEntry<'_> {
    fn push_onto(&self, chain: &mut ToolChain) {
        match self {
            Self::Result(result) => {
                chain.push(ToolEntry {
                    call_id: &result.call_id,
                    tool_name: &result.tool_name,
                    step: result.step as u64,
                    output: &result.output,
                    is_error: result.is_error,
                });
            }
            Self::Intent(intent) => {
                chain.push_intent(IntentEntry {
                    call_id: &intent.call_id,
                    tool_name: &intent.tool_name,
                    step: intent.step as u64,
                });
            }
        }
    }
}

/// The tool chain over a journal (results and intents) as Resume returns it, when its `seq`s
/// run 1..=n; `None` when an entry is missing (a corrupt one, for instance).
fn journal_chain(results: &[ToolResult], intents: &[ToolIntent]) -> Option<ToolChain> {
    let mut ordered: Vec<(u64, JournalEntry<'_>)> = results
        .iter()
        .map(|result| (result.seq, JournalEntry::Result(result)))
        .chain(
            intents
                .iter()
                .map(|intent| (intent.seq, JournalEntry::Intent(intent))),
        )
        .collect();
    ordered.sort_by_key(|(seq, _)| *seq);
    let mut chain = ToolChain::EMPTY;
    for (seq, entry) in ordered {
        if seq != chain.len + 1 {
            return None;
        }
        entry.push_onto(&mut chain);
    }
    Some(chain)
}
