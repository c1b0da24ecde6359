//! Builders of domain values for tests in any crate: a run, a message, a Save, a tool result.

use crate::domain::Epoch;
use std::collections::BTreeMap;

use crate::domain::{CallId, Message, NewCheckpoint, NewToolResult, RunId, RunKey, Step, Tenant};

pub fn run(tenant: &str, run_id: &str) -> RunKey {
    RunKey::new(
        Tenant::parse(tenant).unwrap(),
        RunId::parse(run_id).unwrap(),
    )
}

pub fn message(role: &str, content: &str) -> Message {
    Message {
        role: role.to_owned(),
        content: content.as_bytes().to_vec(),
    }
}

/// A Save at `step` whose new messages (user turns) start at `offset`, at epoch 0.
pub fn checkpoint(run: &RunKey, step: u64, offset: u64, texts: &[&str]) -> NewCheckpoint {
    NewCheckpoint {
        run: run.clone(),
        step: Step::new(step),
        content_type: "application/json".to_owned(),
        state: format!("{{\"step\":{step}}}").into_bytes(),
        messages: texts.iter().map(|text| message("user", text)).collect(),
        message_offset: offset,
        metadata: BTreeMap::from([
            ("agent".to_owned(), "planner".to_owned()),
            ("note".to_owned(), format!("step {step}")),
        ]),
        epoch: Epoch::new(0),
        client_checksum: None,
        tool_count: None,
        label: None,
    }
}

/// A RecordToolResult at step 1, epoch 0.
pub fn tool(run: &RunKey, call_id: &str, output: &str) -> NewToolResult {
    NewToolResult {
        run: run.clone(),
        call_id: CallId::parse(call_id).unwrap(),
        tool_name: "search".to_owned(),
        step: Step::new(1),
        output: output.as_bytes().to_vec(),
        is_error: false,
        epoch: Epoch::new(0),
        arguments_digest: Default::default(),
    }
}

pub fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| String::from_utf8(m.content.clone()).unwrap())
        .collect()
}

pub fn steps(numbers: &[u64]) -> Vec<Step> {
    numbers.iter().copied().map(Step::new).collect()
}
