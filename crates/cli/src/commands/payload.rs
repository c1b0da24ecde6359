//! What a checkpoint holds, for a person or a script: its state (pretty JSON when it is JSON),
//! its message history and the run's tool journal (`runs show RUN --step N --payload`, and the
//! tool results of `runs resume --json`).

use serde_json::{Value, json};

use super::client::{CliError, Client};
use super::output::{one_line, print_fields, print_json, time_json, time_text};
use checkpointd::proto::{self, Checkpoint, ToolResult};

/// Widest message or tool output shown on one line of the text view.
const LINE_WIDTH: usize = 100;

/// `runs show RUN --step N --payload`: one checkpoint in full, and the run's journal.
pub async fn show_payload(
    client: &Client,
    run: &str,
    step: i64,
    json: bool,
) -> Result<(), CliError> {
    let request = proto::LoadAtStepRequest {
        run_id: run.to_owned(),
        step,
        ..Default::default()
    };
    let reply = checkpointd_runner::pages::load_at_step(&client.checkpoints(), request)
        .await
        .map_err(|status| client.status(status))?;
    let checkpoint = reply
        .checkpoint
        .ok_or_else(|| CliError::Other(format!("the server sent no checkpoint for step {step}")))?;
    if json {
        print_json(&checkpoint_json(&checkpoint, &reply.tool_results));
    } else {
        print_checkpoint(&checkpoint, &reply.tool_results);
    }
    Ok(())
}

fn checkpoint_json(checkpoint: &Checkpoint, tools: &[ToolResult]) -> Value {
    let (encoding, state) = state_json(&checkpoint.content_type, &checkpoint.state);
    json!({
        "run_id": checkpoint.run_id,
        "step": checkpoint.step,
        "epoch": checkpoint.epoch,
        "checksum": checkpoint.checksum,
        "created_at": time_json(checkpoint.created_at.as_ref()),
        "content_type": checkpoint.content_type,
        "state_bytes": checkpoint.state.len(),
        "state_encoding": encoding,
        "state": state,
        "metadata": checkpoint.metadata,
        "messages": checkpoint.messages.iter().map(|message| json!({
            "role": message.role,
            "content": text_or_base64(&message.content),
        })).collect::<Vec<_>>(),
        "tool_count": checkpoint.tool_count,
        "tool_results": tool_results_json(tools),
    })
}

fn print_checkpoint(checkpoint: &Checkpoint, tools: &[ToolResult]) {
    let content_type = if checkpoint.content_type.is_empty() {
        "-".to_owned()
    } else {
        checkpoint.content_type.clone()
    };
    print_fields(&[
        ("run", checkpoint.run_id.clone()),
        ("step", checkpoint.step.to_string()),
        ("epoch", checkpoint.epoch.to_string()),
        ("checksum", checkpoint.checksum.clone()),
        ("saved", time_text(checkpoint.created_at.as_ref())),
        ("content type", content_type),
    ]);
    let (encoding, state) = state_text(&checkpoint.content_type, &checkpoint.state);
    println!("state ({} bytes, {encoding}):", checkpoint.state.len());
    println!("{state}");
    println!("messages ({}):", checkpoint.messages.len());
    for (index, message) in checkpoint.messages.iter().enumerate() {
        let content = one_line(&bytes_for_line(&message.content), LINE_WIDTH);
        println!("  {:>4}  {}  {content}", index + 1, message.role);
    }
    // The journal holds every result of the run; those past `tool_count` came after this
    // checkpoint and are replayed when the steps after it run again.
    println!(
        "tool results ({} in the run's journal, {} of them when this step was saved):",
        tools.len(),
        checkpoint.tool_count
    );
    for tool in tools {
        let after = if tool.seq > checkpoint.tool_count {
            "  (after this checkpoint)"
        } else {
            ""
        };
        let outcome = if tool.is_error { "error" } else { "ok" };
        let output = one_line(&bytes_for_line(&tool.output), LINE_WIDTH);
        println!(
            "  {:>4}  {}  step {}  {outcome}  {output}{after}",
            tool.seq, tool.call_id, tool.step
        );
    }
}

/// Tool results as JSON: ids, step, and the output as text or base64.
pub fn tool_results_json(tools: &[ToolResult]) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            json!({
                "seq": tool.seq,
                "call_id": tool.call_id,
                "tool_name": tool.tool_name,
                "step": tool.step,
                "is_error": tool.is_error,
                "output": text_or_base64(&tool.output),
                "recorded_at": time_json(tool.recorded_at.as_ref()),
            })
        })
        .collect()
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json") || essence.ends_with("+json")
}

/// The state as JSON: the document itself when it is JSON, else text or base64; with the
/// encoding used, so a JSON string state is never mistaken for text.
fn state_json(content_type: &str, state: &[u8]) -> (&'static str, Value) {
    if is_json(content_type)
        && let Ok(document) = serde_json::from_slice::<Value>(state)
    {
        return ("json", document);
    }
    match std::str::from_utf8(state) {
        Ok(text) => ("text", Value::String(text.to_owned())),
        Err(_) => ("base64", Value::String(base64(state))),
    }
}

/// The state for a person: pretty JSON, text, or base64.
fn state_text(content_type: &str, state: &[u8]) -> (&'static str, String) {
    match state_json(content_type, state) {
        ("json", document) => (
            "json",
            serde_json::to_string_pretty(&document).unwrap_or_default(),
        ),
        (encoding, Value::String(text)) => (encoding, text),
        (encoding, other) => (encoding, other.to_string()),
    }
}

/// Opaque bytes in JSON: a string when they are UTF-8, else `{"base64": "..."}`, as buf curl
/// and grpcurl show bytes.
pub fn text_or_base64(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => Value::String(text.to_owned()),
        Err(_) => json!({ "base64": base64(bytes) }),
    }
}

fn bytes_for_line(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => format!("base64:{}", base64(bytes)),
    }
}

/// Standard base64 with padding (RFC 4648), as proto JSON writes bytes.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = chunk.iter().enumerate().fold(0u32, |group, (index, byte)| {
            group | u32::from(*byte) << (16 - 8 * index)
        });
        for index in 0..4 {
            if index <= chunk.len() {
                out.push(ALPHABET[(group >> (18 - 6 * index) & 0x3f) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_4648_test_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xff, 0xfe]), "//4=");
    }

    #[test]
    fn json_state_is_decoded_and_anything_else_keeps_its_bytes() {
        assert_eq!(
            state_json("application/json", br#"{"n":1}"#),
            ("json", json!({ "n": 1 }))
        );
        assert_eq!(
            state_json("application/vnd.agent+json; charset=utf-8", b"[1]"),
            ("json", json!([1]))
        );
        assert_eq!(
            state_json("application/json", b"{broken"),
            ("text", json!("{broken"))
        );
        assert_eq!(state_json("text/plain", b"hi"), ("text", json!("hi")));
        assert_eq!(state_json("", &[0xff]), ("base64", json!("/w==")));
        assert_eq!(text_or_base64(&[0xff]), json!({ "base64": "/w==" }));
    }
}
