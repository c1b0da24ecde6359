//! A replay must match its call: a step that calls a journalled tool with other arguments than
//! the journalled call's fails fatally, naming the call and both digests; the same arguments,
//! or an entry journalled without a digest, replay as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use checkpointd_runner::agent::{Agent, AgentError, StepOutcome};
use checkpointd_runner::arguments::arguments_digest;
use checkpointd_runner::classify::ErrorClass;
use checkpointd_runner::context::StepContext;
use checkpointd_runner::effects::InDoubtPolicy;
use checkpointd_runner::recovery::TaskEnd;
use serde_json::{Value, json};

use super::memory_api::MemoryApi;
use super::{drive, policy};

/// One step that makes one call with `arguments`: a lookup, or a side-effecting send.
struct OneCall {
    arguments: Value,
    side_effect: bool,
    runs: AtomicUsize,
}

impl OneCall {
    fn new(arguments: Value, side_effect: bool) -> Self {
        Self {
            arguments,
            side_effect,
            runs: AtomicUsize::new(0),
        }
    }
}

#[async_trait]
impl Agent for OneCall {
    fn initial_state(&self, _input: &[u8]) -> Result<Vec<u8>, AgentError> {
        Ok(b"0".to_vec())
    }

    async fn step(&self, ctx: &mut StepContext<'_>) -> Result<StepOutcome, AgentError> {
        let runs = &self.runs;
        let output = if self.side_effect {
            let tool = |_key: String| async move {
                runs.fetch_add(1, Ordering::Relaxed);
                Ok(b"sent".to_vec())
            };
            let policy = InDoubtPolicy::RetryWithKey;
            ctx.call_side_effect("send", &self.arguments, policy, tool)
                .await?
        } else {
            let tool = || async move {
                runs.fetch_add(1, Ordering::Relaxed);
                Ok(b"fresh".to_vec())
            };
            ctx.call_tool("lookup", &self.arguments, tool).await?
        };
        ctx.push_message("tool", output);
        ctx.set_state(b"1".to_vec());
        Ok(StepOutcome::Finished(b"done".to_vec()))
    }

    fn finished(&self, state: &[u8]) -> Option<Vec<u8>> {
        (state == b"1").then(|| b"done".to_vec())
    }
}

/// Drives `agent` once over a journal holding `call_id` (journalled by `journal`).
async fn drive_over(
    journal: impl FnOnce(&MemoryApi),
    agent: &OneCall,
) -> (TaskEnd, Arc<MemoryApi>) {
    let api = Arc::new(MemoryApi::default());
    journal(&api);
    let end = drive(&api, agent, policy("every_step", 0)).await.end;
    (end, api)
}

#[tokio::test(start_paused = true)]
async fn a_journalled_result_is_replayed_only_for_the_same_arguments() {
    let to_a = json!({ "q": "a", "n": 1 });
    let digest_a = arguments_digest(&to_a);
    // Same arguments (another key order is the same JSON object): replayed, the tool never runs.
    let same = OneCall::new(json!({ "n": 1, "q": "a" }), false);
    let (end, _) = drive_over(
        |api| api.journalled_result("step-1/lookup/0", b"old", &digest_a),
        &same,
    )
    .await;
    assert_eq!(end, TaskEnd::Completed);
    assert_eq!(same.runs.load(Ordering::Relaxed), 0, "replayed");

    // An entry journalled before digests replays whatever the arguments.
    let older = OneCall::new(json!({ "q": "b" }), false);
    let (end, _) = drive_over(
        |api| api.journalled_result("step-1/lookup/0", b"old", ""),
        &older,
    )
    .await;
    assert_eq!(end, TaskEnd::Completed);
    assert_eq!(older.runs.load(Ordering::Relaxed), 0, "replayed");

    // Other arguments: fatal, naming the call and both digests, and the tool never runs.
    let other = OneCall::new(json!({ "q": "b", "n": 1 }), false);
    let (end, api) = drive_over(
        |api| api.journalled_result("step-1/lookup/0", b"old", &digest_a),
        &other,
    )
    .await;
    let digest_b = arguments_digest(&other.arguments);
    let TaskEnd::Failed(ErrorClass::Fatal, error) = end else {
        panic!("expected a fatal failure, got {end:?}");
    };
    for named in ["step-1/lookup/0", digest_a.as_str(), digest_b.as_str()] {
        assert!(error.contains(named), "{error}");
    }
    assert_eq!(other.runs.load(Ordering::Relaxed), 0);
    assert_eq!(api.tool_executions(), 0, "nothing journalled");
}

#[tokio::test(start_paused = true)]
async fn an_in_doubt_call_is_never_rerun_with_other_arguments() {
    let journalled = json!({ "to": "a@x" });
    let digest = arguments_digest(&journalled);
    let other = OneCall::new(json!({ "to": "b@x" }), true);
    let (end, _) = drive_over(
        |api| api.journalled_intent("step-1/send/0", &digest),
        &other,
    )
    .await;
    let TaskEnd::Failed(ErrorClass::Fatal, error) = end else {
        panic!("expected a fatal failure, got {end:?}");
    };
    assert!(
        error.contains("step-1/send/0") && error.contains(&digest),
        "{error}"
    );
    assert_eq!(other.runs.load(Ordering::Relaxed), 0, "never re-run");

    // The same arguments settle it by its policy: re-run with its key, and journalled.
    let same = OneCall::new(journalled, true);
    let (end, api) = drive_over(|api| api.journalled_intent("step-1/send/0", &digest), &same).await;
    assert_eq!(end, TaskEnd::Completed);
    assert_eq!(same.runs.load(Ordering::Relaxed), 1);
    assert_eq!(api.tool_executions(), 1);
}
