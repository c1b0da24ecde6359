//! An in-memory checkpointd for one run: Resume, Save (verifying the client's checksum v1 over
//! its whole log and journal), RecordToolResult, and a record of the task transitions.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;
use checkpointd_protocol::checksum::{
    CheckpointContent, IntentEntry, MessageChain, ToolChain, ToolEntry, checkpoint_checksum,
    idempotency_key, to_hex,
};
use checkpointd_runner::api::RunnerApi;
use checkpointd_runner::proto::{
    Checkpoint, ClaimRequest, CompleteRequest, FailRequest, HeartbeatRequest, InDoubtCall, Message,
    PassedOverCheckpoint, RecordToolIntentRequest, RecordToolIntentResponse,
    RecordToolResultRequest, ReleaseRequest, RequestApprovalRequest, ResumeRequest, ResumeResponse,
    SaveRequest, Task, ToolIntent, ToolResult,
};
use tonic::{Code, Status};

/// A queue transition the runner reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transition {
    Completed,
    Failed { fatal: bool, error: String },
    Released,
    AwaitingApproval(String),
}

#[derive(Default)]
struct Run {
    epoch: u64,
    log: Vec<Message>,
    journal: Vec<ToolResult>,
    intents: Vec<ToolIntent>,
    latest: Option<Checkpoint>,
    resumes: usize,
    saves: Vec<(u64, Option<String>)>,
    tool_executions: usize,
    transitions: Vec<Transition>,
    /// Saves answer with this code instead of being stored.
    refuse_saves: Option<Code>,
    /// What every Resume reports as passed over (quarantined above the restored checkpoint).
    passed_over: Vec<PassedOverCheckpoint>,
    /// This many queue transitions are answered UNAVAILABLE before they are recorded, as
    /// during a database failover.
    unavailable_transitions: usize,
}

/// See the module documentation.
#[derive(Default)]
pub struct MemoryApi(Mutex<Run>);

impl MemoryApi {
    /// Every save is answered with `code`, as a server that fenced this worker would.
    pub fn refusing_saves(code: Code) -> Self {
        let api = Self::default();
        api.0.lock().unwrap().refuse_saves = Some(code);
        api
    }

    /// Every later Resume reports `passed_over`, as a server with quarantined checkpoints
    /// above the restored one does until an operator repairs the run.
    pub fn pass_over(&self, passed_over: Vec<PassedOverCheckpoint>) {
        self.0.lock().unwrap().passed_over = passed_over;
    }

    /// Journals a result for `call_id` at step 1 as an earlier incarnation would have, with
    /// `arguments_digest` ("" for one journalled before digests).
    pub fn journalled_result(&self, call_id: &str, output: &[u8], arguments_digest: &str) {
        let mut run = self.0.lock().unwrap();
        let seq = run.journal_len() + 1;
        run.journal.push(ToolResult {
            call_id: call_id.to_owned(),
            tool_name: call_id.split('/').nth(1).unwrap_or_default().to_owned(),
            step: 1,
            output: output.to_vec(),
            seq,
            arguments_digest: arguments_digest.to_owned(),
            ..ToolResult::default()
        });
    }

    /// Journals an intent for `call_id` at step 1 without a result: in doubt on Resume.
    pub fn journalled_intent(&self, call_id: &str, arguments_digest: &str) {
        let mut run = self.0.lock().unwrap();
        let seq = run.journal_len() + 1;
        run.intents.push(ToolIntent {
            idempotency_key: idempotency_key("default", "r", call_id),
            call_id: call_id.to_owned(),
            tool_name: call_id.split('/').nth(1).unwrap_or_default().to_owned(),
            step: 1,
            seq,
            recorded_at: None,
            arguments_digest: arguments_digest.to_owned(),
        });
    }

    pub fn resumes(&self) -> usize {
        self.0.lock().unwrap().resumes
    }

    /// The steps saved, in order.
    pub fn saved_steps(&self) -> Vec<u64> {
        let run = self.0.lock().unwrap();
        run.saves.iter().map(|(step, _)| *step).collect()
    }

    /// Whether every save carried the client's checksum (each one was verified on arrival).
    pub fn every_save_was_checksummed(&self) -> bool {
        let run = self.0.lock().unwrap();
        run.saves.iter().all(|(_, checksum)| checksum.is_some())
    }

    /// RecordToolResult calls that journalled a new result.
    pub fn tool_executions(&self) -> usize {
        self.0.lock().unwrap().tool_executions
    }

    pub fn transitions(&self) -> Vec<Transition> {
        self.0.lock().unwrap().transitions.clone()
    }

    /// The next `count` queue transitions are answered UNAVAILABLE, as during a failover.
    pub fn unavailable_for(count: usize) -> Self {
        let api = Self::default();
        api.0.lock().unwrap().unavailable_transitions = count;
        api
    }

    /// Transitions answered UNAVAILABLE so far are not counted; only those recorded are.
    fn transition(&self, transition: Transition) -> Result<(), Status> {
        let mut run = self.0.lock().unwrap();
        if run.unavailable_transitions > 0 {
            run.unavailable_transitions -= 1;
            return Err(Status::unavailable("storage is unavailable; retry later"));
        }
        run.transitions.push(transition);
        Ok(())
    }
}

impl Run {
    /// Results and intents journalled: the next entry's seq is one more.
    fn journal_len(&self) -> u64 {
        (self.journal.len() + self.intents.len()) as u64
    }

    /// Checksum v1 of `request` as this server would store it, recomputed from scratch.
    fn checksum_of(&self, request: &SaveRequest, log: &[Message]) -> String {
        let messages = MessageChain::over(
            log.iter()
                .map(|message| (message.role.as_str(), message.content.as_slice())),
        );
        let mut tools = ToolChain::EMPTY;
        for seq in 1..=self.journal_len() {
            if let Some(result) = self.journal.iter().find(|result| result.seq == seq) {
                tools.push(ToolEntry {
                    call_id: &result.call_id,
                    tool_name: &result.tool_name,
                    step: result.step as u64,
                    output: &result.output,
                    is_error: result.is_error,
                });
            } else if let Some(intent) = self.intents.iter().find(|intent| intent.seq == seq) {
                tools.push_intent(IntentEntry {
                    call_id: &intent.call_id,
                    tool_name: &intent.tool_name,
                    step: intent.step as u64,
                });
            }
        }
        let metadata: BTreeMap<String, String> = request.metadata.clone().into_iter().collect();
        to_hex(&checkpoint_checksum(
            CheckpointContent {
                run_id: &request.run_id,
                step: request.step as u64,
                content_type: &request.content_type,
                state: &request.state,
            },
            &metadata,
            &messages,
            &tools,
        ))
    }
}

#[async_trait]
impl RunnerApi for MemoryApi {
    async fn resume(&self, _request: ResumeRequest) -> Result<ResumeResponse, Status> {
        let mut run = self.0.lock().unwrap();
        run.resumes += 1;
        run.epoch += 1;
        // A rewind truncates the log at the restored checkpoint.
        let kept = run.latest.as_ref().map_or(0, |c| c.messages.len());
        run.log.truncate(kept);
        Ok(ResumeResponse {
            recovered_from_step: run.latest.as_ref().map_or(0, |c| c.step),
            restarted_from_scratch: run.latest.is_none(),
            checkpoint: run.latest.clone(),
            tool_results: run.journal.clone(),
            epoch: run.epoch,
            skipped_steps: Vec::new(),
            tool_intents: run.intents.clone(),
            in_doubt: run
                .intents
                .iter()
                .filter(|intent| !run.journal.iter().any(|r| r.call_id == intent.call_id))
                .map(|intent| InDoubtCall {
                    call_id: intent.call_id.clone(),
                    tool_name: intent.tool_name.clone(),
                    step: intent.step,
                    idempotency_key: intent.idempotency_key.clone(),
                    corrupt: false,
                })
                .collect(),
            corrupt_call_ids: Vec::new(),
            // The double answers in one piece.
            continuation: Vec::new(),
            passed_over: run.passed_over.clone(),
        })
    }

    async fn save(&self, request: SaveRequest) -> Result<(), Status> {
        let mut run = self.0.lock().unwrap();
        if let Some(code) = run.refuse_saves {
            return Err(Status::new(code, "refused"));
        }
        if request.epoch != Some(run.epoch) {
            return Err(Status::failed_precondition("stale epoch"));
        }
        if request.message_offset != run.log.len() as u64 {
            return Err(Status::invalid_argument(
                "message_offset does not match the log",
            ));
        }
        let mut log = run.log.clone();
        log.extend(request.messages.iter().cloned());
        let checksum = run.checksum_of(&request, &log);
        if let Some(client) = &request.checksum
            && *client != checksum
        {
            return Err(Status::invalid_argument(format!(
                "checksum mismatch: the request carries {client}, the content hashes to {checksum}"
            )));
        }
        run.saves
            .push((request.step as u64, request.checksum.clone()));
        run.latest = Some(Checkpoint {
            run_id: request.run_id,
            step: request.step,
            content_type: request.content_type,
            state: request.state,
            messages: log.clone(),
            epoch: run.epoch,
            checksum,
            message_count: log.len() as u64,
            tool_count: run.journal_len(),
            ..Checkpoint::default()
        });
        run.log = log;
        Ok(())
    }

    async fn record_tool_result(
        &self,
        request: RecordToolResultRequest,
    ) -> Result<ToolResult, Status> {
        let mut run = self.0.lock().unwrap();
        if let Some(known) = run.journal.iter().find(|r| r.call_id == request.call_id) {
            return Ok(known.clone());
        }
        run.tool_executions += 1;
        let result = ToolResult {
            call_id: request.call_id,
            tool_name: request.tool_name,
            step: request.step,
            output: request.output,
            is_error: request.is_error,
            seq: run.journal_len() + 1,
            arguments_digest: request.arguments_digest,
            ..ToolResult::default()
        };
        run.journal.push(result.clone());
        Ok(result)
    }

    async fn record_tool_intent(
        &self,
        request: RecordToolIntentRequest,
    ) -> Result<RecordToolIntentResponse, Status> {
        let mut run = self.0.lock().unwrap();
        let result = run
            .journal
            .iter()
            .find(|r| r.call_id == request.call_id)
            .cloned();
        let known = run
            .intents
            .iter()
            .find(|i| i.call_id == request.call_id)
            .cloned();
        if known.is_some() || result.is_some() {
            return Ok(RecordToolIntentResponse {
                intent: known,
                already_recorded: true,
                result,
            });
        }
        let intent = ToolIntent {
            idempotency_key: idempotency_key("default", &request.run_id, &request.call_id),
            call_id: request.call_id,
            tool_name: request.tool_name,
            step: request.step,
            seq: run.journal_len() + 1,
            recorded_at: None,
            arguments_digest: request.arguments_digest,
        };
        run.intents.push(intent.clone());
        Ok(RecordToolIntentResponse {
            intent: Some(intent),
            already_recorded: false,
            result: None,
        })
    }

    async fn claim(&self, _request: ClaimRequest) -> Result<Vec<Task>, Status> {
        Ok(Vec::new())
    }

    async fn heartbeat(&self, _request: HeartbeatRequest) -> Result<(), Status> {
        Ok(())
    }

    async fn complete(&self, _request: CompleteRequest) -> Result<(), Status> {
        self.transition(Transition::Completed)
    }

    async fn fail(&self, request: FailRequest) -> Result<(), Status> {
        let fatal = request.error_class == checkpointd_runner::proto::ErrorClass::Fatal as i32;
        self.transition(Transition::Failed {
            fatal,
            error: request.error,
        })
    }

    async fn release(&self, _request: ReleaseRequest) -> Result<(), Status> {
        self.transition(Transition::Released)
    }

    async fn request_approval(&self, request: RequestApprovalRequest) -> Result<(), Status> {
        self.transition(Transition::AwaitingApproval(request.action))
    }
}
