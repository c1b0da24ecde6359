//! The recovery loop: resume, step, checkpoint by strategy, and classify what goes wrong.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tonic::Code;
use tracing::Instrument as _;

use crate::agent::{Agent, AgentError, StepOutcome};
use crate::api::RunnerApi;
use crate::claimed::ClaimedTask;
use crate::classify::{ErrorClass, ErrorClassifier};
use crate::context::StepContext;
use crate::events::RunnerEvents;
use crate::proto::{ClientCapability, ResumeRequest};
use crate::session::{Decision, RunStats, Session, SessionSetup};
use crate::strategy::Strategy;
pub use crate::task_end::TaskEnd;

/// How the runner drives each task.
#[derive(Clone, Debug)]
pub struct RecoveryPolicy {
    pub strategy: Strategy,
    /// In-process resurrections after transient errors before the task goes back to the queue.
    pub max_resurrections: u32,
    /// Pause before each resurrection.
    pub cooldown: Duration,
    pub classifier: ErrorClassifier,
    /// After shutdown begins, how long the current step may still run.
    pub drain_deadline: Duration,
}

impl Default for RecoveryPolicy {
    fn default() -> Self {
        Self {
            strategy: Strategy::default(),
            max_resurrections: 3,
            cooldown: Duration::from_secs(2),
            classifier: ErrorClassifier::default(),
            drain_deadline: Duration::from_secs(10),
        }
    }
}

/// What one incarnation of the run produced.
enum Incarnation {
    Finished(Vec<u8>),
    NeedsApproval { action: String, details: Vec<u8> },
    Stopped,
}

/// Cancellation signals a task watches.
#[derive(Clone)]
pub struct Signals {
    /// The worker is shutting down.
    pub shutdown: CancellationToken,
    /// The lease was lost (a heartbeat was fenced).
    pub lease_lost: CancellationToken,
}

/// Where a task's driver reads from and reports to.
#[derive(Clone)]
pub struct Driver {
    pub api: Arc<dyn RunnerApi>,
    pub events: Arc<dyn RunnerEvents>,
    pub policy: RecoveryPolicy,
    pub signals: Signals,
}

/// Runs a claimed task to its end for this attempt: resumes the run, resurrects it in-process
/// after transient errors up to the budget, and reports the outcome to the queue.
pub async fn drive_task(
    agent: &dyn Agent,
    driver: &Driver,
    task: ClaimedTask,
    stats: &mut RunStats,
) -> TaskEnd {
    let (run_id, task_id) = (task.run_id().to_owned(), task.task_id().to_owned());
    driver.events.claimed(&run_id, &task_id, task.attempt());
    let policy = &driver.policy;
    let signals = &driver.signals;
    let decision = task.decision();
    let mut resurrections = 0;
    let end = loop {
        let outcome = incarnate(agent, driver, &task, decision.clone(), stats).await;
        let error = match outcome {
            Ok(Incarnation::Finished(result)) => break task.complete(result).await,
            Ok(Incarnation::NeedsApproval { action, details }) => {
                break task.request_approval(action, details).await;
            }
            Ok(Incarnation::Stopped) => break task.release().await,
            Err(error) => error,
        };
        if signals.lease_lost.is_cancelled() || is_fenced(&error) {
            break TaskEnd::LeaseLost;
        }
        let class = policy.classifier.classify(&error);
        if class == ErrorClass::Fatal || resurrections >= policy.max_resurrections {
            break task.fail(class, error.to_string()).await;
        }
        resurrections += 1;
        tracing::warn!(
            run_id = %run_id,
            error = %error,
            resurrection = resurrections,
            budget = policy.max_resurrections,
            "transient error; resurrecting from the latest valid checkpoint"
        );
        tokio::select! {
            _ = tokio::time::sleep(policy.cooldown) => {}
            _ = signals.shutdown.cancelled() => break task.release().await,
        }
    };
    driver.events.finished(&run_id, &task_id, &end);
    end
}

fn is_fenced(error: &AgentError) -> bool {
    matches!(error, AgentError::Rpc(status) if status.code() == Code::FailedPrecondition)
}

/// One life of the run: Resume, then steps until it finishes, asks for approval, stops or fails.
async fn incarnate(
    agent: &dyn Agent,
    driver: &Driver,
    task: &ClaimedTask,
    decision: Option<Decision>,
    stats: &mut RunStats,
) -> Result<Incarnation, AgentError> {
    let resumed = driver
        .api
        .resume(ResumeRequest {
            run_id: task.run_id().to_owned(),
            // The worker holds nothing of the run yet: the whole history, and a run that is
            // new to the server starts from scratch.
            message_offset: 0,
            require_existing: false,
            // The session settles calls in doubt by each tool's policy (corrupt ones always ask).
            capabilities: vec![ClientCapability::InDoubtCalls as i32],
        })
        .await?;
    driver.events.resumed(task.run_id(), &resumed);
    if !resumed.passed_over.is_empty() {
        // On every Resume that passes over them, until an operator repairs the run: a fallback
        // past corruption is never silent (DESIGN contract 13).
        tracing::warn!(
            run_id = %task.run_id(),
            passed_over = %crate::events::steps_text(&resumed.passed_over),
            recovered_from_step = resumed.recovered_from_step,
            restarted_from_scratch = resumed.restarted_from_scratch,
            "resumed past quarantined checkpoints; once investigated, checkpointd runs \
             drop-quarantined removes them"
        );
        driver
            .events
            .passed_over(task.run_id(), &resumed.passed_over);
    }
    let initial = if resumed.restarted_from_scratch {
        agent.initial_state(task.input())?
    } else {
        Vec::new()
    };
    let setup = SessionSetup {
        api: driver.api.clone(),
        run_id: task.run_id().to_owned(),
        input: task.input().to_vec(),
        initial_state: initial,
        strategy: driver.policy.strategy,
        content_type: "application/json".to_owned(),
        decision,
    };
    let mut session = Session::resumed(setup, resumed);
    let outcome = run_steps(agent, &mut session, driver).await;
    stats.absorb(std::mem::take(&mut session.stats));
    outcome
}

async fn run_steps(
    agent: &dyn Agent,
    session: &mut Session,
    driver: &Driver,
) -> Result<Incarnation, AgentError> {
    let (policy, signals) = (&driver.policy, &driver.signals);
    if let Some(result) = agent.finished(&session.state) {
        return Ok(Incarnation::Finished(result));
    }
    loop {
        if signals.shutdown.is_cancelled() {
            session.save_completed().await?;
            return Ok(Incarnation::Stopped);
        }
        let step = session.completed_step + 1;
        // A failed or abandoned step must leave no trace in the state that gets checkpointed.
        let rollback = (session.state.clone(), session.messages.len());
        let deadline = async {
            signals.shutdown.cancelled().await;
            tokio::time::sleep(policy.drain_deadline).await;
        };
        // One trace per step: the step's tool calls and its checkpoint are children of this span.
        let step_span = tracing::info_span!(
            "agent.step",
            checkpoint.run_id = %session.run_id,
            checkpoint.step = step,
        );
        let (outcome, executed_tools) = {
            let mut ctx = StepContext::new(session, step);
            let outcome = tokio::select! {
                outcome = agent.step(&mut ctx).instrument(step_span.clone()) => Some(outcome),
                _ = signals.lease_lost.cancelled() => {
                    Some(Err(AgentError::Rpc(tonic::Status::failed_precondition("lease lost"))))
                }
                _ = deadline => None,
            };
            (outcome, ctx.executed_tools)
        };
        let outcome = match outcome {
            Some(Ok(outcome)) => outcome,
            Some(Err(error)) => {
                session.state = rollback.0;
                session.messages.truncate(rollback.1);
                if let AgentError::ApprovalRequired { action, details } = error {
                    session.save_completed().await?;
                    return Ok(Incarnation::NeedsApproval { action, details });
                }
                return Err(error);
            }
            None => {
                tracing::warn!(run_id = %session.run_id, step, "drain deadline passed mid-step; the step is abandoned");
                session.state = rollback.0;
                session.messages.truncate(rollback.1);
                // The steps before the abandoned one are done: keep them, as a drain promises.
                session.save_completed().await?;
                return Ok(Incarnation::Stopped);
            }
        };
        session.completed_step = step;
        driver.events.step_completed(&session.run_id, step);
        match outcome {
            StepOutcome::Continue => {
                if policy.strategy.saves_after(step, executed_tools) {
                    session.save_completed().instrument(step_span).await?;
                    driver.events.saved(&session.run_id, step);
                }
            }
            StepOutcome::Finished(result) => {
                session.save_completed().instrument(step_span).await?;
                return Ok(Incarnation::Finished(result));
            }
        }
    }
}
