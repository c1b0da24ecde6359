//! One incarnation of a run: what Resume restored, the tool journal, and the saves since.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tracing::Instrument as _;

use super::agent::AgentError;
use super::client::Clients;
use super::strategy::Strategy;
use crate::proto::{Message, ResumeResponse, SaveRequest, ToolResult};

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
    pub clients: Clients,
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
    pub(super) clients: Clients,
    pub(super) run_id: String,
    pub(super) input: Vec<u8>,
    pub(super) epoch: u64,
    pub(super) strategy: Strategy,
    pub(super) content_type: String,
    /// The last step whose effects are in `state` and `messages`.
    pub(super) completed_step: u64,
    pub(super) state: Vec<u8>,
    pub(super) messages: Vec<Message>,
    /// Length of the message log the service holds.
    pub(super) saved_messages: usize,
    pub(super) last_saved_step: Option<u64>,
    pub(super) journal: HashMap<String, ToolResult>,
    pub(super) decision: Option<Decision>,
    pub(super) stats: RunStats,
}

impl Session {
    /// Builds the session Resume describes.
    pub fn resumed(setup: SessionSetup, resumed: ResumeResponse) -> Self {
        let SessionSetup {
            clients,
            run_id,
            input,
            initial_state,
            strategy,
            content_type,
            decision,
        } = setup;
        let journal = resumed
            .tool_results
            .into_iter()
            .map(|result| (result.call_id.clone(), result))
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
        Self {
            clients,
            run_id,
            input,
            epoch: resumed.epoch,
            strategy,
            content_type,
            completed_step,
            saved_messages: messages.len(),
            state,
            messages,
            last_saved_step,
            journal,
            decision,
            stats: RunStats::default(),
        }
    }

    /// Saves `state` as the checkpoint of `step`, with the first `message_len` messages.
    pub(super) async fn save(
        &mut self,
        step: u64,
        state: Vec<u8>,
        message_len: usize,
    ) -> Result<(), AgentError> {
        if self.last_saved_step == Some(step) {
            return Ok(());
        }
        let bytes = state.len();
        let request = SaveRequest {
            run_id: self.run_id.clone(),
            step: step as i64,
            content_type: self.content_type.clone(),
            state,
            messages: self.messages[self.saved_messages..message_len].to_vec(),
            message_offset: self.saved_messages as u64,
            metadata: HashMap::new(),
            epoch: Some(self.epoch),
            checksum: None,
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
        self.clients
            .checkpoints
            .save(request)
            .instrument(span)
            .await?;
        let latency = started.elapsed();
        crate::telemetry::metrics::record_runner_save(latency);
        tracing::debug!(run_id = %self.run_id, step, bytes, latency_us = latency.as_micros() as u64, "checkpoint saved");
        self.stats.save_latencies.push(latency);
        self.stats.save_bytes.push(bytes);
        self.saved_messages = message_len;
        self.last_saved_step = Some(step);
        Ok(())
    }

    /// Checkpoints the last completed step, unless it already is.
    pub(super) async fn save_completed(&mut self) -> Result<(), AgentError> {
        if self.completed_step == 0 {
            return Ok(());
        }
        let state = self.state.clone();
        self.save(self.completed_step, state, self.messages.len())
            .await
    }
}
