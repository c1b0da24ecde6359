//! A deterministic, simulated LLM agent with tools and fault injection, for demos and tests.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::agent::{Agent, AgentError, StepOutcome};
use crate::context::StepContext;
use crate::effects::InDoubtPolicy;
use crate::events::RunnerEvents;

/// Faults the demo agent injects.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Abort the whole process during this step, after its tools ran and before any checkpoint.
    pub crash_at_step: Option<u64>,
    /// Fail this step with an error whose message reads as fatal.
    pub fatal_at_step: Option<u64>,
    /// Chance that any step fails with a transient error.
    pub transient_probability: f64,
    /// Ask a human before the side-effecting tool of this step.
    pub approval_at_step: Option<u64>,
    /// Seeds the transient-error draws.
    pub seed: u64,
    /// Simulated model latency per step, so tests can interrupt a run mid-task.
    pub step_delay: std::time::Duration,
    /// Abort the whole process right after this step's email is sent and before its result is
    /// journalled: the window an intent and an idempotency key close.
    pub crash_after_side_effect_at_step: Option<u64>,
    /// What the email tool declares for a call left in doubt by a crash.
    pub in_doubt: InDoubtPolicy,
}

/// Simulates an LLM agent: each step "thinks", looks something up, and on two steps out of
/// three sends an email: a side effect that appends a line to `side_effect_file`.
pub struct DemoAgent {
    pub faults: Faults,
    pub side_effect_file: Option<PathBuf>,
    /// Where the crash is announced before the process aborts.
    events: Arc<dyn RunnerEvents>,
    draws: AtomicU64,
}

impl DemoAgent {
    pub fn new(
        faults: Faults,
        side_effect_file: Option<PathBuf>,
        events: Arc<dyn RunnerEvents>,
    ) -> Self {
        Self {
            faults,
            side_effect_file,
            events,
            draws: AtomicU64::new(0),
        }
    }

    /// A uniform draw in [0, 1) from a splitmix64 sequence: reproducible for a seed.
    fn draw(&self) -> f64 {
        let n = self.draws.fetch_add(1, Ordering::Relaxed);
        let mut z = self
            .faults
            .seed
            .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / (u64::MAX as f64 + 1.0)
    }

    /// Sends one email, honouring the idempotency key as a mail provider would: a key seen
    /// before sends nothing and answers as the first send did.
    fn send_email(&self, run_id: &str, call: &str, key: &str) -> Result<Vec<u8>, AgentError> {
        if let Some(path) = &self.side_effect_file {
            spool_once(path, &format!("{run_id} {call}\n"), key)
                .map_err(|error| AgentError::Transient(format!("mail spool: {error}")))?;
        }
        Ok(json!({ "sent": true, "call": call })
            .to_string()
            .into_bytes())
    }
}

/// Appends `line` to the spool at most once per `key`, as a mail provider that honours
/// idempotency keys would; under an exclusive lock on the spool, so concurrent workers sending
/// the same call send it once. The spool keeps one line per email sent.
///
/// The key is recorded (`<spool>.keys`) before the email goes out, like a provider's pending
/// record: a key seen before sends again only when its email never reached the spool (a crash
/// between the two writes), so a crash anywhere neither repeats nor loses an email.
fn spool_once(path: &Path, line: &str, key: &str) -> std::io::Result<()> {
    let mut spool = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)?;
    spool.lock()?;
    let mut keys_path = path.as_os_str().to_owned();
    keys_path.push(".keys");
    let mut keys = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(&keys_path)?;
    if read_all(&mut keys)?.lines().any(|seen| seen == key) {
        let email = line.trim_end();
        if read_all(&mut spool)?.lines().any(|sent| sent == email) {
            return Ok(());
        }
    } else {
        // One write call per line: O_APPEND keeps lines whole.
        keys.write_all(format!("{key}\n").as_bytes())?;
        keys.sync_data()?;
    }
    spool.write_all(line.as_bytes())?;
    spool.sync_data()
}

fn read_all(file: &mut std::fs::File) -> std::io::Result<String> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_string(&mut text)?;
    Ok(text)
}

fn parse_state(bytes: &[u8]) -> Result<Value, AgentError> {
    serde_json::from_slice(bytes)
        .map_err(|error| AgentError::Fatal(format!("corrupt demo state: {error}")))
}

#[async_trait]
impl Agent for DemoAgent {
    fn initial_state(&self, input: &[u8]) -> Result<Vec<u8>, AgentError> {
        let input: Value = if input.is_empty() {
            json!({})
        } else {
            serde_json::from_slice(input)
                .map_err(|error| AgentError::Fatal(format!("task input is not JSON: {error}")))?
        };
        let steps = input.get("steps").and_then(Value::as_u64).unwrap_or(10);
        Ok(
            json!({ "steps": steps, "done": 0, "emails": 0, "facts": [] })
                .to_string()
                .into_bytes(),
        )
    }

    async fn step(&self, ctx: &mut StepContext<'_>) -> Result<StepOutcome, AgentError> {
        let step = ctx.step();
        let mut state = parse_state(ctx.state())?;

        let delay = self.faults.step_delay;
        let thought = ctx
            .llm(|| async move {
                tokio::time::sleep(delay).await;
                Ok(format!("step {step}: decide what to do next"))
            })
            .await?;
        ctx.push_message("assistant", thought);
        let fact = ctx
            .call_tool("lookup", &json!({ "step": step }), || async move {
                Ok(format!("fact #{step}").into_bytes())
            })
            .await?;
        ctx.push_message("tool", fact.clone());
        if let Some(facts) = state["facts"].as_array_mut() {
            facts.push(Value::String(String::from_utf8_lossy(&fact).into()));
        }

        if !step.is_multiple_of(3) {
            let action = format!("send_email step-{step}");
            let approved = if self.faults.approval_at_step == Some(step) {
                let decision = ctx.request_approval(
                    &action,
                    format!("{{\"to\":\"ops\",\"step\":{step}}}").as_bytes(),
                )?;
                if !decision.approved {
                    ctx.push_message(
                        "tool",
                        format!(
                            "send_email rejected by {}: {}",
                            decision.decided_by, decision.comment
                        ),
                    );
                }
                decision.approved
            } else {
                true
            };
            if approved {
                let run_id = ctx.run_id().to_owned();
                let call = format!("step-{step}/send_email");
                let crash = self.faults.crash_after_side_effect_at_step == Some(step);
                let arguments = json!({ "to": "ops", "step": step });
                let policy = self.faults.in_doubt;
                ctx.call_side_effect("send_email", &arguments, policy, |key| async move {
                    let sent = self.send_email(&run_id, &call, &key)?;
                    if crash {
                        self.events.crashing(&run_id, step);
                        std::process::abort();
                    }
                    Ok(sent)
                })
                .await?;
                state["emails"] = json!(state["emails"].as_u64().unwrap_or(0) + 1);
            }
        }

        if self.faults.crash_at_step == Some(step) {
            self.events.crashing(ctx.run_id(), step);
            std::process::abort();
        }
        if self.faults.fatal_at_step == Some(step) {
            return Err(AgentError::Other(
                "invalid credentials for the model provider".into(),
            ));
        }
        if self.faults.transient_probability > 0.0
            && self.draw() < self.faults.transient_probability
        {
            return Err(AgentError::Transient("simulated model timeout".into()));
        }

        state["done"] = json!(step);
        ctx.set_state(state.to_string().into_bytes());
        match final_result(&state) {
            Some(result) => Ok(StepOutcome::Finished(result)),
            None => Ok(StepOutcome::Continue),
        }
    }

    fn finished(&self, state: &[u8]) -> Option<Vec<u8>> {
        final_result(&parse_state(state).ok()?)
    }
}

/// The task's result once every step is done: `{"steps": N, "emails": E}`.
fn final_result(state: &Value) -> Option<Vec<u8>> {
    let total = state["steps"].as_u64().unwrap_or(10);
    let done = state["done"].as_u64().unwrap_or(0);
    (done >= total).then(|| {
        json!({ "steps": done, "emails": state["emails"] })
            .to_string()
            .into_bytes()
    })
}
