//! What a step sees: state, messages, journalled tools, approvals, and the before-LLM hook.

use std::collections::HashMap;
use std::future::Future;

use serde_json::Value;
use tonic_types::StatusExt;

use crate::agent_error::AgentError;
use crate::arguments::{arguments_digest, check_replay};
use crate::effects::{InDoubtPolicy, in_doubt_action, settle_in_doubt};
use crate::proto::{InDoubtCall, Message, RecordToolIntentRequest, RecordToolResultRequest};
use crate::session::{Decision, Session};

/// The context of one step of one run.
pub struct StepContext<'a> {
    session: &'a mut Session,
    step: u64,
    /// State and log length the step started from, for a before-LLM checkpoint.
    start: Option<(Vec<u8>, usize)>,
    call_indexes: HashMap<String, u32>,
    pub(super) executed_tools: bool,
}

impl<'a> StepContext<'a> {
    pub(super) fn new(session: &'a mut Session, step: u64) -> Self {
        let start = session
            .strategy
            .before_llm
            .then(|| (session.state.clone(), session.messages.len()));
        Self {
            session,
            step,
            start,
            call_indexes: HashMap::new(),
            executed_tools: false,
        }
    }

    /// The step being executed; the first step of a run is 1.
    pub fn step(&self) -> u64 {
        self.step
    }

    pub fn run_id(&self) -> &str {
        &self.session.run_id
    }

    /// The task's input.
    pub fn input(&self) -> &[u8] {
        &self.session.input
    }

    pub fn state(&self) -> &[u8] {
        &self.session.state
    }

    pub fn set_state(&mut self, state: Vec<u8>) {
        self.session.state = state;
    }

    /// The full message history, restored ones included.
    pub fn messages(&self) -> &[Message] {
        &self.session.messages
    }

    pub fn push_message(&mut self, role: &str, content: impl Into<Vec<u8>>) {
        self.session.messages.push(Message {
            role: role.to_owned(),
            content: content.into(),
        });
    }

    /// Calls a tool at most once per call: the result of a call already journalled (by this or
    /// an earlier incarnation of the run) is returned without running `tool`; otherwise `tool`
    /// runs and its result is journalled durably before it is returned.
    ///
    /// The call id is `step-{step}/{name}/{n}` for the n-th call of `name` in this step, so a
    /// re-executed step finds its earlier calls.
    ///
    /// `arguments` are what the call acts on (the values `tool` captures), as JSON. Their
    /// digest ([`crate::arguments`]) is journalled with the result, and a journalled result is
    /// replayed only for a call with the same digest: when the re-executed step calls the tool
    /// with other arguments, the step fails fatally naming the call and both digests, instead
    /// of taking another call's result as its own. A result journalled without a digest
    /// replays as before.
    pub async fn call_tool<F, Fut>(
        &mut self,
        name: &str,
        arguments: &Value,
        tool: F,
    ) -> Result<Vec<u8>, AgentError>
    where
        F: FnOnce() -> Fut + Send,
        Fut: Future<Output = Result<Vec<u8>, AgentError>> + Send,
    {
        let call_id = self.next_call_id(name);
        let digest = arguments_digest(arguments);
        if let Some(output) = self.replay(&call_id, &digest)? {
            return Ok(output);
        }
        let output = tool().await?;
        self.record_result(name, call_id, digest, output).await
    }

    /// Calls a side-effecting tool at most once per call, even across a crash between its
    /// effect and its journalled result.
    ///
    /// A journalled result is replayed. Otherwise an intent is journalled durably first, and
    /// `tool` runs with the call's idempotency key, which it must honour (a key seen before
    /// repeats no effect). A call Resume reported in doubt (intent, no result) is settled by
    /// `policy`: re-run with the same key, put to a human, or failed; never re-run silently.
    ///
    /// `arguments` are digested and checked as [`Self::call_tool`]'s, against the journalled
    /// result and intent alike: an in-doubt call is never re-run with other arguments under
    /// its key.
    pub async fn call_side_effect<F, Fut>(
        &mut self,
        name: &str,
        arguments: &Value,
        policy: InDoubtPolicy,
        tool: F,
    ) -> Result<Vec<u8>, AgentError>
    where
        F: FnOnce(String) -> Fut + Send,
        Fut: Future<Output = Result<Vec<u8>, AgentError>> + Send,
    {
        let call_id = self.next_call_id(name);
        let digest = arguments_digest(arguments);
        if let Some(output) = self.replay(&call_id, &digest)? {
            return Ok(output);
        }
        if let Some(intent) = self.session.intents.get(&call_id) {
            check_replay(&call_id, &intent.arguments_digest, &digest)?;
        }
        let in_doubt = self.session.in_doubt.get(&call_id).cloned();
        let key = match in_doubt {
            Some(call) => self.settle(&call, policy)?,
            None => {
                let reply = self
                    .session
                    .api
                    .record_tool_intent(RecordToolIntentRequest {
                        run_id: self.session.run_id.clone(),
                        call_id: call_id.clone(),
                        tool_name: name.to_owned(),
                        step: self.step as i64,
                        epoch: Some(self.session.epoch),
                        arguments_digest: digest.clone(),
                    })
                    .await
                    .map_err(refused_arguments)?;
                if let Some(result) = reply.result {
                    // Completed by another incarnation since this one resumed.
                    check_replay(&call_id, &result.arguments_digest, &digest)?;
                    let output = result.output.clone();
                    self.session.journal_recorded(result);
                    return Ok(output);
                }
                let intent = reply.intent.ok_or_else(|| {
                    AgentError::Other("RecordToolIntent returned no intent".into())
                })?;
                if reply.already_recorded {
                    check_replay(&call_id, &intent.arguments_digest, &digest)?;
                    // Journalled by an incarnation this one did not see finish: in doubt.
                    self.settle(
                        &InDoubtCall {
                            call_id: intent.call_id.clone(),
                            tool_name: intent.tool_name.clone(),
                            step: intent.step,
                            idempotency_key: intent.idempotency_key.clone(),
                            corrupt: false,
                        },
                        policy,
                    )?
                } else {
                    let key = intent.idempotency_key.clone();
                    self.session.intent_recorded(intent);
                    key
                }
            }
        };
        let output = tool(key).await?;
        self.record_result(name, call_id, digest, output).await
    }

    /// Applies `policy` to an in-doubt call; the key to re-run it with when the policy allows.
    fn settle(&self, call: &InDoubtCall, policy: InDoubtPolicy) -> Result<String, AgentError> {
        let approved = self
            .session
            .decision
            .as_ref()
            .filter(|decision| decision.action == in_doubt_action(&call.call_id))
            .map(|decision| decision.approved);
        settle_in_doubt(call, policy, approved)?;
        tracing::warn!(
            run_id = %self.session.run_id,
            call_id = %call.call_id,
            %policy,
            "re-running an in-doubt tool call with its idempotency key"
        );
        Ok(call.idempotency_key.clone())
    }

    /// `step-{step}/{name}/{n}` for the n-th call of `name` in this step.
    fn next_call_id(&mut self, name: &str) -> String {
        let index = self.call_indexes.entry(name.to_owned()).or_insert(0);
        let call_id = format!("step-{}/{name}/{index}", self.step);
        *index += 1;
        call_id
    }

    /// The journalled output of a call, counted as a replay; a fatal error when it was
    /// journalled with other arguments than `digest`'s.
    fn replay(&mut self, call_id: &str, digest: &str) -> Result<Option<Vec<u8>>, AgentError> {
        let Some(recorded) = self.session.journal.get(call_id) else {
            return Ok(None);
        };
        if let Err(refused) = check_replay(call_id, &recorded.arguments_digest, digest) {
            tracing::error!(
                run_id = %self.session.run_id,
                call_id,
                stored_digest = %recorded.arguments_digest,
                digest,
                "a journalled tool call is replayed with other arguments; failing the step"
            );
            return Err(refused);
        }
        self.session.stats.tools_replayed += 1;
        checkpointd_telemetry::metrics::record_tool_call(true);
        tracing::info!(run_id = %self.session.run_id, call_id, "tool result replayed from the journal");
        Ok(Some(recorded.output.clone()))
    }

    /// Journals a call's result durably and returns the output journalled.
    async fn record_result(
        &mut self,
        name: &str,
        call_id: String,
        digest: String,
        output: Vec<u8>,
    ) -> Result<Vec<u8>, AgentError> {
        let recorded = self
            .session
            .api
            .record_tool_result(RecordToolResultRequest {
                run_id: self.session.run_id.clone(),
                call_id: call_id.clone(),
                tool_name: name.to_owned(),
                step: self.step as i64,
                output,
                is_error: false,
                epoch: Some(self.session.epoch),
                arguments_digest: digest,
            })
            .await
            .map_err(refused_arguments)?;
        self.session.stats.tools_executed += 1;
        checkpointd_telemetry::metrics::record_tool_call(false);
        self.executed_tools = true;
        let output = recorded.output.clone();
        self.session.journal_recorded(recorded);
        Ok(output)
    }

    /// Wraps an LLM call. With the `before_llm` strategy the state this step started from is
    /// checkpointed first, so a crash during a long model call loses nothing before it.
    pub async fn llm<F, Fut, T>(&mut self, call: F) -> Result<T, AgentError>
    where
        F: FnOnce() -> Fut + Send,
        Fut: Future<Output = Result<T, AgentError>> + Send,
    {
        if let Some((state, message_len)) = self.start.take()
            && self.step > 1
        {
            self.session.save(self.step - 1, state, message_len).await?;
        }
        call().await
    }

    /// Asks a human. Returns the decision once one was made for `action`; until then the step
    /// stops with [`AgentError::ApprovalRequired`], the runner checkpoints, parks the task in
    /// `input_required`, and re-runs this step after the decision.
    pub fn request_approval(&self, action: &str, details: &[u8]) -> Result<Decision, AgentError> {
        match &self.session.decision {
            Some(decision) if decision.action == action => Ok(decision.clone()),
            _ => Err(AgentError::ApprovalRequired {
                action: action.to_owned(),
                details: details.to_vec(),
            }),
        }
    }
}

/// A journal write the server refused because the call id is journalled with other arguments
/// (reason `ARGUMENTS_MISMATCH`) is fatal: retrying makes the same call again. Any other
/// refusal is classified as before.
fn refused_arguments(status: tonic::Status) -> AgentError {
    match status.get_details_error_info() {
        Some(info) if info.reason == "ARGUMENTS_MISMATCH" => {
            AgentError::Fatal(status.message().to_owned())
        }
        _ => AgentError::Rpc(status),
    }
}
