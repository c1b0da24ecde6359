//! The recovery loop in process, against an in-memory checkpointd, with tokio time paused: the
//! resurrection budget and its cooldowns, fatal against transient errors, what the strategies
//! save, shutdown and fencing. Paused time auto-advances, so waits cost nothing and are exact.

mod arguments;
mod memory_api;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use checkpointd_runner::agent::{Agent, AgentError, StepOutcome};
use checkpointd_runner::claimed::ClaimedTask;
use checkpointd_runner::classify::ErrorClass;
use checkpointd_runner::context::StepContext;
use checkpointd_runner::events::RunnerEvents;
use checkpointd_runner::proto::{PassedOverCheckpoint, ResumeResponse, Task};
use checkpointd_runner::recovery::{Driver, RecoveryPolicy, Signals, TaskEnd, drive_task};
use checkpointd_runner::session::RunStats;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tonic::Code;

use memory_api::{MemoryApi, Transition};

const COOLDOWN: Duration = Duration::from_secs(5);

/// What a scripted step does instead of succeeding.
enum Fault {
    Transient,
    Fatal,
    /// Shutdown begins during the step, which then fails transiently.
    ShutdownThenTransient(CancellationToken),
    /// Shutdown begins during the step, which then never ends.
    ShutdownThenHang(CancellationToken),
}

/// Runs `steps` steps; each appends a message, some call a tool, and the scripted faults fire
/// once each, in order, at their step.
struct ScriptedAgent {
    steps: u64,
    tool_steps: Vec<u64>,
    faults: Mutex<Vec<(u64, Fault)>>,
}

impl ScriptedAgent {
    fn new(steps: u64) -> Self {
        Self {
            steps,
            tool_steps: Vec::new(),
            faults: Mutex::new(Vec::new()),
        }
    }

    fn with_tools_at(mut self, steps: &[u64]) -> Self {
        self.tool_steps = steps.to_vec();
        self
    }

    fn failing(self, step: u64, fault: Fault) -> Self {
        self.faults.lock().unwrap().push((step, fault));
        self
    }

    fn fault_at(&self, step: u64) -> Option<Fault> {
        let mut faults = self.faults.lock().unwrap();
        let index = faults.iter().position(|(at, _)| *at == step)?;
        Some(faults.remove(index).1)
    }
}

#[async_trait]
impl Agent for ScriptedAgent {
    fn initial_state(&self, _input: &[u8]) -> Result<Vec<u8>, AgentError> {
        Ok(b"0".to_vec())
    }

    async fn step(&self, ctx: &mut StepContext<'_>) -> Result<StepOutcome, AgentError> {
        let step = ctx.step();
        ctx.push_message("assistant", format!("step {step}"));
        if self.tool_steps.contains(&step) {
            let output = ctx
                .call_tool(
                    "lookup",
                    &serde_json::json!({ "step": step }),
                    || async move { Ok(format!("fact {step}").into_bytes()) },
                )
                .await?;
            ctx.push_message("tool", output);
        }
        match self.fault_at(step) {
            None => {}
            Some(Fault::Transient) => return Err(AgentError::Transient("model timeout".into())),
            Some(Fault::Fatal) => return Err(AgentError::Fatal("bad credentials".into())),
            Some(Fault::ShutdownThenTransient(shutdown)) => {
                shutdown.cancel();
                return Err(AgentError::Transient("model timeout".into()));
            }
            Some(Fault::ShutdownThenHang(shutdown)) => {
                shutdown.cancel();
                std::future::pending::<()>().await;
            }
        }
        ctx.set_state(step.to_string().into_bytes());
        if step >= self.steps {
            Ok(StepOutcome::Finished(b"done".to_vec()))
        } else {
            Ok(StepOutcome::Continue)
        }
    }

    fn finished(&self, state: &[u8]) -> Option<Vec<u8>> {
        let done: u64 = std::str::from_utf8(state).ok()?.parse().ok()?;
        (done >= self.steps).then(|| b"done".to_vec())
    }
}

/// Records the steps Resume restarted from, and the steps each `passed_over` event named.
#[derive(Default)]
struct ResumedFrom(Mutex<Vec<i64>>, Mutex<Vec<Vec<i64>>>);

impl RunnerEvents for ResumedFrom {
    fn resumed(&self, _run_id: &str, resumed: &ResumeResponse) {
        self.0.lock().unwrap().push(resumed.recovered_from_step);
    }

    fn passed_over(&self, _run_id: &str, passed_over: &[PassedOverCheckpoint]) {
        let steps = passed_over.iter().map(|checkpoint| checkpoint.step);
        self.1.lock().unwrap().push(steps.collect());
    }
}

struct Outcome {
    end: TaskEnd,
    elapsed: Duration,
    stats: RunStats,
    resumed_from: Vec<i64>,
    /// The steps of each `passed_over` event, in order.
    passed_over: Vec<Vec<i64>>,
}

fn policy(strategy: &str, max_resurrections: u32) -> RecoveryPolicy {
    RecoveryPolicy {
        strategy: strategy.parse().unwrap(),
        max_resurrections,
        cooldown: COOLDOWN,
        drain_deadline: Duration::from_secs(10),
        ..RecoveryPolicy::default()
    }
}

/// Drives one claimed task of run `r` to the end of its attempt, with no shutdown.
async fn drive(api: &Arc<MemoryApi>, agent: &dyn Agent, policy: RecoveryPolicy) -> Outcome {
    drive_until(CancellationToken::new(), api, agent, policy).await
}

/// Drives one claimed task of run `r` to the end of its attempt, or of the drain `shutdown`
/// begins.
async fn drive_until(
    shutdown: CancellationToken,
    api: &Arc<MemoryApi>,
    agent: &dyn Agent,
    policy: RecoveryPolicy,
) -> Outcome {
    let events = Arc::new(ResumedFrom::default());
    let driver = Driver {
        api: api.clone(),
        events: events.clone(),
        policy,
        signals: Signals {
            shutdown,
            lease_lost: CancellationToken::new(),
        },
    };
    let task = Task {
        task_id: "t".into(),
        run_id: "r".into(),
        attempt: 1,
        ..Task::default()
    };
    let task = ClaimedTask::new(api.clone(), task, None);
    let mut stats = RunStats::default();
    let started = Instant::now();
    let end = drive_task(agent, &driver, task, &mut stats).await;
    let resumed_from = events.0.lock().unwrap().clone();
    let passed_over = events.1.lock().unwrap().clone();
    Outcome {
        end,
        elapsed: started.elapsed(),
        stats,
        resumed_from,
        passed_over,
    }
}

#[tokio::test(start_paused = true)]
async fn transient_errors_resurrect_after_each_cooldown_until_the_budget_is_spent() {
    let api = Arc::new(MemoryApi::default());
    let agent = (0..3).fold(ScriptedAgent::new(5), |agent, _| {
        agent.failing(2, Fault::Transient)
    });

    let outcome = drive(&api, &agent, policy("every_step", 2)).await;

    assert_eq!(
        outcome.end,
        TaskEnd::Failed(ErrorClass::Transient, "transient: model timeout".into())
    );
    assert_eq!(api.resumes(), 3, "one life plus two resurrections");
    assert_eq!(outcome.resumed_from, vec![0, 1, 1]);
    assert_eq!(
        outcome.elapsed,
        2 * COOLDOWN,
        "one cooldown before each resurrection"
    );
    assert_eq!(
        api.transitions(),
        vec![Transition::Failed {
            fatal: false,
            error: "transient: model timeout".into()
        }]
    );
}

#[tokio::test(start_paused = true)]
async fn every_resume_past_quarantined_checkpoints_is_reported_not_only_the_first() {
    let api = Arc::new(MemoryApi::default());
    let quarantined = |step| PassedOverCheckpoint {
        step,
        reason: "checksum mismatch".into(),
        ..PassedOverCheckpoint::default()
    };
    api.pass_over(vec![quarantined(9), quarantined(8)]);
    let agent = ScriptedAgent::new(3).failing(2, Fault::Transient);

    let outcome = drive(&api, &agent, policy("every_step", 1)).await;

    assert_eq!(outcome.end, TaskEnd::Completed);
    assert_eq!(outcome.resumed_from, vec![0, 1], "one resurrection");
    assert_eq!(outcome.passed_over, vec![vec![9, 8], vec![9, 8]]);

    // Without quarantined checkpoints there is nothing to report.
    let quiet = Arc::new(MemoryApi::default());
    let outcome = drive(&quiet, &ScriptedAgent::new(2), policy("every_step", 0)).await;
    assert_eq!(outcome.end, TaskEnd::Completed);
    assert!(outcome.passed_over.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_run_resumed_at_its_final_checkpoint_completes_without_stepping_past_the_end() {
    let api = Arc::new(MemoryApi::default());
    let agent = ScriptedAgent::new(3).with_tools_at(&[1, 2, 3, 4]);
    assert_eq!(
        drive(&api, &agent, policy("every_step", 0)).await.end,
        TaskEnd::Completed
    );

    // As after a crash between the last checkpoint and Complete: the task is claimed again.
    let again = drive(&api, &agent, policy("every_step", 0)).await;

    assert_eq!(again.end, TaskEnd::Completed);
    assert_eq!(again.resumed_from, vec![3]);
    assert_eq!(
        api.saved_steps(),
        vec![1, 2, 3],
        "no step 4 was run or saved"
    );
    assert_eq!(
        api.tool_executions(),
        3,
        "no tool of a step past the end ran"
    );
}

#[tokio::test(start_paused = true)]
async fn a_fatal_error_fails_the_task_at_once_with_budget_left() {
    let api = Arc::new(MemoryApi::default());
    let agent = ScriptedAgent::new(5).failing(3, Fault::Fatal);

    let outcome = drive(&api, &agent, policy("every_step", 3)).await;

    assert_eq!(
        outcome.end,
        TaskEnd::Failed(ErrorClass::Fatal, "fatal: bad credentials".into())
    );
    assert_eq!(api.resumes(), 1, "a fatal error is never resurrected");
    assert_eq!(outcome.elapsed, Duration::ZERO);
    assert_eq!(api.saved_steps(), vec![1, 2]);
}

#[tokio::test(start_paused = true)]
async fn a_resurrection_resumes_from_the_latest_checkpoint_and_reuses_journalled_tools() {
    let api = Arc::new(MemoryApi::default());
    let agent = ScriptedAgent::new(7)
        .with_tools_at(&[1, 2, 3, 4, 5, 6, 7])
        .failing(5, Fault::Transient);

    let outcome = drive(&api, &agent, policy("every_n:3", 3)).await;

    assert_eq!(outcome.end, TaskEnd::Completed);
    assert_eq!(outcome.resumed_from, vec![0, 3]);
    assert_eq!(outcome.elapsed, COOLDOWN);
    assert_eq!(api.saved_steps(), vec![3, 3 + 3, 7]);
    // Steps 4 and 5 ran twice; their tools ran once, the second time from the journal.
    assert_eq!(api.tool_executions(), 7);
    assert_eq!(
        (outcome.stats.tools_executed, outcome.stats.tools_replayed),
        (7, 2)
    );
    assert!(
        api.every_save_was_checksummed(),
        "the journal ran ahead of the checkpoint and every save still carried a checksum"
    );
    assert_eq!(api.transitions(), vec![Transition::Completed]);
}

#[tokio::test(start_paused = true)]
async fn each_strategy_checkpoints_the_steps_it_names() {
    let cases: [(&str, &[u64], &[u64]); 5] = [
        ("every_step", &[], &[1, 2, 3, 4, 5, 6, 7]),
        ("every_n:3", &[], &[3, 6, 7]),
        ("every_n:3", &[2], &[3, 6, 7]),
        ("hybrid:3", &[2, 4], &[2, 3, 4, 6, 7]),
        ("every_n:5,after_tools", &[1], &[1, 5, 7]),
    ];
    for (strategy, tool_steps, saved) in cases {
        let api = Arc::new(MemoryApi::default());
        let agent = ScriptedAgent::new(7).with_tools_at(tool_steps);

        let outcome = drive(&api, &agent, policy(strategy, 0)).await;

        assert_eq!(outcome.end, TaskEnd::Completed, "{strategy}");
        assert_eq!(
            api.saved_steps(),
            saved,
            "{strategy} with tools at {tool_steps:?}"
        );
        assert!(api.every_save_was_checksummed(), "{strategy}");
    }
}

#[tokio::test(start_paused = true)]
async fn before_llm_checkpoints_the_previous_step_before_the_model_is_called() {
    struct CallsTheModel;

    #[async_trait]
    impl Agent for CallsTheModel {
        fn initial_state(&self, _input: &[u8]) -> Result<Vec<u8>, AgentError> {
            Ok(b"0".to_vec())
        }

        async fn step(&self, ctx: &mut StepContext<'_>) -> Result<StepOutcome, AgentError> {
            let step = ctx.step();
            let reply = ctx
                .llm(|| async move { Ok(format!("thought {step}")) })
                .await?;
            ctx.push_message("assistant", reply);
            ctx.set_state(step.to_string().into_bytes());
            Ok(if step == 4 {
                StepOutcome::Finished(Vec::new())
            } else {
                StepOutcome::Continue
            })
        }
    }
    let api = Arc::new(MemoryApi::default());

    let outcome = drive(&api, &CallsTheModel, policy("every_n:10,before_llm", 0)).await;

    assert_eq!(outcome.end, TaskEnd::Completed);
    assert_eq!(api.saved_steps(), vec![1, 2, 3, 4]);
    assert!(api.every_save_was_checksummed());
}

#[tokio::test(start_paused = true)]
async fn shutdown_during_the_cooldown_releases_the_task_at_once() {
    let api = Arc::new(MemoryApi::default());
    let shutdown = CancellationToken::new();
    let agent = ScriptedAgent::new(5).failing(2, Fault::ShutdownThenTransient(shutdown.clone()));

    let outcome = drive_until(shutdown, &api, &agent, policy("every_step", 3)).await;

    assert_eq!(outcome.end, TaskEnd::Released);
    assert_eq!(outcome.elapsed, Duration::ZERO, "no cooldown is waited out");
    assert_eq!(api.resumes(), 1);
    assert_eq!(api.transitions(), vec![Transition::Released]);
}

#[tokio::test(start_paused = true)]
async fn a_step_still_running_at_the_drain_deadline_is_abandoned_and_the_steps_before_it_saved() {
    let api = Arc::new(MemoryApi::default());
    let shutdown = CancellationToken::new();
    let agent = ScriptedAgent::new(5).failing(3, Fault::ShutdownThenHang(shutdown.clone()));
    let policy = policy("every_n:10", 3);
    let drain_deadline = policy.drain_deadline;

    let outcome = drive_until(shutdown, &api, &agent, policy).await;

    assert_eq!(outcome.end, TaskEnd::Released);
    assert_eq!(outcome.elapsed, drain_deadline);
    assert_eq!(
        api.saved_steps(),
        vec![2],
        "the steps finished before the abandoned one are checkpointed"
    );
}

#[tokio::test(start_paused = true)]
async fn a_fenced_save_ends_the_attempt_as_lease_lost_without_reporting_to_the_queue() {
    let api = Arc::new(MemoryApi::refusing_saves(Code::FailedPrecondition));
    let agent = ScriptedAgent::new(5);

    let outcome = drive(&api, &agent, policy("every_step", 3)).await;

    assert_eq!(outcome.end, TaskEnd::LeaseLost);
    assert_eq!(api.resumes(), 1, "a fenced worker does not resurrect");
    assert_eq!(api.transitions(), Vec::new());
}

#[tokio::test(start_paused = true)]
async fn an_outcome_answered_unavailable_is_reported_again_until_the_server_is_back() {
    // Ten refusals span about 12 s of backoff: a failover's length, well inside the retry bound.
    let api = Arc::new(MemoryApi::unavailable_for(10));
    let agent = ScriptedAgent::new(3);

    let outcome = drive(&api, &agent, policy("every_step", 3)).await;

    assert_eq!(outcome.end, TaskEnd::Completed);
    assert_eq!(api.transitions(), vec![Transition::Completed]);
}

#[tokio::test(start_paused = true)]
async fn an_outcome_the_server_never_takes_is_given_up_on_and_left_to_the_lease() {
    let api = Arc::new(MemoryApi::unavailable_for(usize::MAX));
    let agent = ScriptedAgent::new(3);

    let outcome = drive(&api, &agent, policy("every_step", 3)).await;

    // The worker moves on after the retry bound; the task is reclaimed when its lease expires.
    assert_eq!(outcome.end, TaskEnd::Completed);
    assert_eq!(api.transitions(), Vec::new());
    assert!(
        (Duration::from_secs(55)..Duration::from_secs(65)).contains(&outcome.elapsed),
        "gave up after {:?}",
        outcome.elapsed
    );
}
