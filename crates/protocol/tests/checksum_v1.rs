//! Checksum v1 against the published vectors in tests/vectors, which were computed by an
//! independent implementation (tests/vectors/generate.py).

use std::collections::BTreeMap;

use checkpointd_protocol::checksum::{
    CheckpointContent, IntentEntry, MessageChain, ToolChain, ToolEntry, checkpoint_checksum,
    idempotency_key, to_hex,
};
use serde_json::Value;

fn bytes(value: &Value) -> Vec<u8> {
    hex::decode(value.as_str().unwrap()).unwrap()
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap()
}

fn published_document() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/checksum_v1.json"
    );
    let document: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(document["version"], 1);
    document
}

fn published_vectors() -> Vec<Value> {
    published_document()["vectors"].as_array().unwrap().clone()
}

fn message_chain(vector: &Value) -> MessageChain {
    let messages: Vec<(String, Vec<u8>)> = vector["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (text(&m["role"]).to_owned(), bytes(&m["content_hex"])))
        .collect();
    MessageChain::over(
        messages
            .iter()
            .map(|(role, content)| (role.as_str(), content.as_slice())),
    )
}

fn tool_chain(vector: &Value) -> ToolChain {
    let mut chain = ToolChain::EMPTY;
    for tool in vector["tools"].as_array().unwrap() {
        if tool["kind"] == "intent" {
            chain.push_intent(IntentEntry {
                call_id: text(&tool["call_id"]),
                tool_name: text(&tool["tool_name"]),
                step: tool["step"].as_u64().unwrap(),
            });
            continue;
        }
        chain.push(ToolEntry {
            call_id: text(&tool["call_id"]),
            tool_name: text(&tool["tool_name"]),
            step: tool["step"].as_u64().unwrap(),
            output: &bytes(&tool["output_hex"]),
            is_error: tool["is_error"].as_bool().unwrap(),
        });
    }
    chain
}

#[test]
fn every_published_vector_hashes_to_its_expected_checksum() {
    let vectors = published_vectors();
    assert!(vectors.len() >= 5);
    for vector in &vectors {
        let name = text(&vector["name"]);
        let messages = message_chain(vector);
        let tools = tool_chain(vector);
        assert_eq!(
            to_hex(&messages.head),
            text(&vector["message_chain_hex"]),
            "{name}"
        );
        assert_eq!(
            to_hex(&tools.head),
            text(&vector["tool_chain_hex"]),
            "{name}"
        );
        let metadata: BTreeMap<String, String> = vector["metadata"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), text(v).to_owned()))
            .collect();
        let checksum = checkpoint_checksum(
            CheckpointContent {
                run_id: text(&vector["run_id"]),
                step: vector["step"].as_u64().unwrap(),
                content_type: text(&vector["content_type"]),
                state: &bytes(&vector["state_hex"]),
            },
            &metadata,
            &messages,
            &tools,
        );
        assert_eq!(to_hex(&checksum), text(&vector["expected"]), "{name}");
    }
}

#[test]
fn chains_count_what_they_cover_and_start_at_zero() {
    let mut messages = MessageChain::EMPTY;
    assert_eq!(messages.head, [0; 32]);
    let first = messages.push("user", b"hello");
    let second = messages.push("assistant", b"hi");
    assert_eq!(messages.len, 2);
    assert_ne!(first, second);
    assert_eq!(
        MessageChain::over([("user", &b"hello"[..]), ("assistant", &b"hi"[..])]),
        messages
    );
}

#[test]
fn published_vectors_cover_intents_beside_results() {
    let vectors = published_vectors();
    let intents = vectors
        .iter()
        .flat_map(|vector| vector["tools"].as_array().unwrap())
        .filter(|tool| tool["kind"] == "intent")
        .count();
    assert!(intents >= 2);
}

#[test]
fn every_published_idempotency_key_is_reproduced() {
    let keys = published_document()["idempotency_keys"]
        .as_array()
        .unwrap()
        .clone();
    assert!(keys.len() >= 4);
    for key in &keys {
        assert_eq!(
            idempotency_key(
                text(&key["tenant"]),
                text(&key["run_id"]),
                text(&key["call_id"])
            ),
            text(&key["expected"])
        );
    }
}

#[test]
fn an_intent_never_hashes_like_a_result_with_the_same_fields() {
    let mut as_intent = ToolChain::EMPTY;
    as_intent.push_intent(IntentEntry {
        call_id: "c",
        tool_name: "t",
        step: 1,
    });
    let mut as_result = ToolChain::EMPTY;
    as_result.push(ToolEntry {
        call_id: "c",
        tool_name: "t",
        step: 1,
        output: b"",
        is_error: false,
    });
    assert_ne!(as_intent, as_result);
}
