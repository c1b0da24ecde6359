//! What the runner reports as it drives tasks. [`StdoutEvents`] prints the `event ...` lines
//! the demo, the bench and the process tests parse; tests of the loop record them instead.

use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::proto::{PassedOverCheckpoint, ResumeResponse};
use crate::task_end::TaskEnd;

/// Milestones of a task's attempt, in the order they happen. Every method defaults to doing
/// nothing, so an observer implements only what it watches.
pub trait RunnerEvents: Send + Sync + 'static {
    /// A task was claimed and its driver starts.
    fn claimed(&self, _run_id: &str, _task_id: &str, _attempt: u64) {}
    /// Resume answered: the run restarts from `recovered_from_step` (or from scratch).
    fn resumed(&self, _run_id: &str, _resumed: &ResumeResponse) {}
    /// Resume restored past quarantined (corrupt) checkpoints, newest first: told on every
    /// Resume until an operator repairs the run, never only on the one that found them.
    fn passed_over(&self, _run_id: &str, _passed_over: &[PassedOverCheckpoint]) {}
    /// A step finished and its effects are in the run's state (not necessarily saved).
    fn step_completed(&self, _run_id: &str, _step: u64) {}
    /// The strategy checkpointed the state after `step`.
    fn saved(&self, _run_id: &str, _step: u64) {}
    /// The demo agent is about to abort the process during `step`.
    fn crashing(&self, _run_id: &str, _step: u64) {}
    /// The attempt ended.
    fn finished(&self, _run_id: &str, _task_id: &str, _end: &TaskEnd) {}
}

/// Reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEvents;

impl RunnerEvents for NoEvents {}

/// One `event <name> key=value ...` line per milestone on stdout, with `at_ms` (Unix time in
/// milliseconds) where scripts measure latency.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdoutEvents;

impl RunnerEvents for StdoutEvents {
    fn claimed(&self, run_id: &str, task_id: &str, attempt: u64) {
        println!(
            "event claimed run={run_id} task={task_id} attempt={attempt} at_ms={}",
            unix_millis()
        );
    }

    fn resumed(&self, run_id: &str, resumed: &ResumeResponse) {
        println!(
            "event resumed run={run_id} recovered_from_step={} restarted_from_scratch={} epoch={} skipped={:?} at_ms={}",
            resumed.recovered_from_step,
            resumed.restarted_from_scratch,
            resumed.epoch,
            resumed.skipped_steps,
            unix_millis()
        );
    }

    fn passed_over(&self, run_id: &str, passed_over: &[PassedOverCheckpoint]) {
        println!(
            "event passed_over run={run_id} steps={} at_ms={}",
            steps_text(passed_over),
            unix_millis()
        );
    }

    fn step_completed(&self, run_id: &str, step: u64) {
        println!(
            "event step_completed run={run_id} step={step} at_ms={}",
            unix_millis()
        );
    }

    fn saved(&self, run_id: &str, step: u64) {
        println!(
            "event saved run={run_id} step={step} at_ms={}",
            unix_millis()
        );
    }

    fn crashing(&self, run_id: &str, step: u64) {
        println!("event crashing run={run_id} step={step}");
        // The process aborts next: what is still buffered would be lost.
        let _ = std::io::stdout().flush();
    }

    fn finished(&self, run_id: &str, task_id: &str, end: &TaskEnd) {
        println!("event finished run={run_id} task={task_id} end={end:?}");
    }
}

fn unix_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// The steps of `passed_over` as `8,7,6`: one token, as every value of an event line.
pub fn steps_text(passed_over: &[PassedOverCheckpoint]) -> String {
    let steps: Vec<String> = passed_over
        .iter()
        .map(|checkpoint| checkpoint.step.to_string())
        .collect();
    steps.join(",")
}
