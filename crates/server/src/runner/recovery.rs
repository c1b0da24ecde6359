//! The recovery loop: resume, step, checkpoint by strategy, and classify what goes wrong.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio_util::sync::CancellationToken;
use tonic::Code;
use tracing::Instrument as _;

use super::agent::{Agent, AgentError, StepOutcome};
use super::classify::ErrorClassifier;
use super::client::Clients;
use super::context::StepContext;
use super::session::{Decision, RunStats, Session, SessionSetup};
use super::strategy::Strategy;
use crate::proto::{self, ResumeRequest};
use crate::queue::ErrorClass;

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

/// How an attempt at a task ended, from the queue's point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskEnd {
    Completed,
    Failed(ErrorClass, String),
    AwaitingApproval(String),
    /// Shutdown: checkpointed and handed back with no attempt charged.
    Released,
    /// Another worker owns the task now; this one stops without writing.
    LeaseLost,
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

/// Runs a claimed task to its end for this attempt: resumes the run, resurrects it in-process
/// after transient errors up to the budget, and reports the outcome to the queue.
pub async fn drive_task(
    agent: &dyn Agent,
    clients: &Clients,
    task: &proto::Task,
    policy: &RecoveryPolicy,
    signals: &Signals,
    stats: &mut RunStats,
) -> TaskEnd {
    println!(
        "event claimed run={} task={} attempt={} at_ms={}",
        task.run_id,
        task.task_id,
        task.attempt,
        unix_millis()
    );
    let decision = task
        .approval
        .as_ref()
        .filter(|a| a.decided)
        .map(|a| Decision {
            action: a.action.clone(),
            approved: a.approved,
            decided_by: a.decided_by.clone(),
            comment: a.comment.clone(),
        });
    let mut resurrections = 0;
    let end = loop {
        let outcome = incarnate(
            agent,
            clients,
            task,
            policy,
            signals,
            decision.clone(),
            stats,
        )
        .await;
        let error = match outcome {
            Ok(Incarnation::Finished(result)) => {
                break report_complete(clients, task, result).await;
            }
            Ok(Incarnation::NeedsApproval { action, details }) => {
                break report_approval(clients, task, action, details).await;
            }
            Ok(Incarnation::Stopped) => break report_release(clients, task).await,
            Err(error) => error,
        };
        if signals.lease_lost.is_cancelled() || is_fenced(&error) {
            break TaskEnd::LeaseLost;
        }
        let class = policy.classifier.classify(&error);
        if class == ErrorClass::Fatal || resurrections >= policy.max_resurrections {
            break report_failure(clients, task, class, error.to_string()).await;
        }
        resurrections += 1;
        tracing::warn!(
            run_id = %task.run_id,
            error = %error,
            resurrection = resurrections,
            budget = policy.max_resurrections,
            "transient error; resurrecting from the latest valid checkpoint"
        );
        tokio::select! {
            _ = tokio::time::sleep(policy.cooldown) => {}
            _ = signals.shutdown.cancelled() => break report_release(clients, task).await,
        }
    };
    println!(
        "event finished run={} task={} end={end:?}",
        task.run_id, task.task_id
    );
    end
}

fn is_fenced(error: &AgentError) -> bool {
    matches!(error, AgentError::Rpc(status) if status.code() == Code::FailedPrecondition)
}

fn unix_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// One life of the run: Resume, then steps until it finishes, asks for approval, stops or fails.
async fn incarnate(
    agent: &dyn Agent,
    clients: &Clients,
    task: &proto::Task,
    policy: &RecoveryPolicy,
    signals: &Signals,
    decision: Option<Decision>,
    stats: &mut RunStats,
) -> Result<Incarnation, AgentError> {
    let resumed = clients
        .checkpoints
        .clone()
        .resume(ResumeRequest {
            run_id: task.run_id.clone(),
        })
        .await?
        .into_inner();
    println!(
        "event resumed run={} recovered_from_step={} restarted_from_scratch={} epoch={} skipped={:?} at_ms={}",
        task.run_id,
        resumed.recovered_from_step,
        resumed.restarted_from_scratch,
        resumed.epoch,
        resumed.skipped_steps,
        unix_millis()
    );
    let initial = if resumed.restarted_from_scratch {
        agent.initial_state(&task.input)?
    } else {
        Vec::new()
    };
    let setup = SessionSetup {
        clients: clients.clone(),
        run_id: task.run_id.clone(),
        input: task.input.clone(),
        initial_state: initial,
        strategy: policy.strategy,
        content_type: "application/json".to_owned(),
        decision,
    };
    let mut session = Session::resumed(setup, resumed);
    let outcome = run_steps(agent, &mut session, policy, signals).await;
    stats.absorb(std::mem::take(&mut session.stats));
    outcome
}

async fn run_steps(
    agent: &dyn Agent,
    session: &mut Session,
    policy: &RecoveryPolicy,
    signals: &Signals,
) -> Result<Incarnation, AgentError> {
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
                return Ok(Incarnation::Stopped);
            }
        };
        session.completed_step = step;
        match outcome {
            StepOutcome::Continue => {
                if policy.strategy.saves_after(step, executed_tools) {
                    session.save_completed().instrument(step_span).await?;
                    println!(
                        "event saved run={} step={step} at_ms={}",
                        session.run_id,
                        unix_millis()
                    );
                }
            }
            StepOutcome::Finished(result) => {
                session.save_completed().instrument(step_span).await?;
                return Ok(Incarnation::Finished(result));
            }
        }
    }
}

async fn report_complete(clients: &Clients, task: &proto::Task, result: Vec<u8>) -> TaskEnd {
    let reply = clients
        .tasks
        .clone()
        .complete(proto::CompleteRequest {
            task_id: task.task_id.clone(),
            attempt: task.attempt,
            result,
        })
        .await;
    settle(reply, TaskEnd::Completed)
}

async fn report_approval(
    clients: &Clients,
    task: &proto::Task,
    action: String,
    details: Vec<u8>,
) -> TaskEnd {
    let reply = clients
        .tasks
        .clone()
        .request_approval(proto::RequestApprovalRequest {
            task_id: task.task_id.clone(),
            attempt: task.attempt,
            action: action.clone(),
            details,
        })
        .await;
    settle(reply, TaskEnd::AwaitingApproval(action))
}

async fn report_release(clients: &Clients, task: &proto::Task) -> TaskEnd {
    let reply = clients
        .tasks
        .clone()
        .release(proto::ReleaseRequest {
            task_id: task.task_id.clone(),
            attempt: task.attempt,
        })
        .await;
    settle(reply, TaskEnd::Released)
}

async fn report_failure(
    clients: &Clients,
    task: &proto::Task,
    class: ErrorClass,
    error: String,
) -> TaskEnd {
    let wire_class = match class {
        ErrorClass::Fatal => proto::ErrorClass::Fatal,
        ErrorClass::Transient => proto::ErrorClass::Transient,
    };
    let reply = clients
        .tasks
        .clone()
        .fail(proto::FailRequest {
            task_id: task.task_id.clone(),
            attempt: task.attempt,
            error: error.clone(),
            error_class: wire_class as i32,
        })
        .await;
    settle(reply, TaskEnd::Failed(class, error))
}

/// A fenced report means another worker owns the task: that is not this worker's error.
fn settle<T>(reply: Result<T, tonic::Status>, end: TaskEnd) -> TaskEnd {
    match reply {
        Ok(_) => end,
        Err(status) if status.code() == Code::FailedPrecondition => TaskEnd::LeaseLost,
        Err(status) => {
            tracing::error!(code = ?status.code(), message = status.message(), "reporting the task outcome failed; the lease will expire and the task will be reclaimed");
            end
        }
    }
}
