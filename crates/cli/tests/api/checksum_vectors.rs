//! Checksum v1 against the vectors in tests/vectors, which were computed by an independent
//! implementation (tests/vectors/generate.py).

use std::collections::BTreeMap;

use checkpointd_core::domain::{
    Message, MessageChain, MessageLog, RunId, RunKey, Step, Tenant, ToolChain, ToolJournal,
    checkpoint_checksum, idempotency_key,
};
use serde_json::Value;

fn bytes(value: &Value) -> Vec<u8> {
    hex::decode(value.as_str().unwrap()).unwrap()
}

fn published_document() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/checksum_v1.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_rust_checksum_matches_every_published_vector() {
    let document = published_document();
    let vectors = document["vectors"].as_array().unwrap();
    assert!(vectors.len() >= 5);
    for vector in vectors {
        let name = vector["name"].as_str().unwrap();
        let messages: Vec<Message> = vector["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| Message {
                role: m["role"].as_str().unwrap().to_owned(),
                content: bytes(&m["content_hex"]),
            })
            .collect();
        let mut tools = ToolChain::EMPTY;
        for tool in vector["tools"].as_array().unwrap() {
            if tool["kind"] == "intent" {
                tools.push_tool_intent(
                    tool["call_id"].as_str().unwrap(),
                    tool["tool_name"].as_str().unwrap(),
                    Step::new(tool["step"].as_u64().unwrap()),
                );
                continue;
            }
            tools.push_result(
                tool["call_id"].as_str().unwrap(),
                tool["tool_name"].as_str().unwrap(),
                Step::new(tool["step"].as_u64().unwrap()),
                &bytes(&tool["output_hex"]),
                tool["is_error"].as_bool().unwrap(),
            );
        }
        let metadata: BTreeMap<String, String> = vector["metadata"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect();
        let chain = MessageChain::over_messages(&messages);
        assert_eq!(
            hex::encode(chain.head),
            vector["message_chain_hex"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            hex::encode(tools.head),
            vector["tool_chain_hex"].as_str().unwrap(),
            "{name}"
        );
        let checksum = checkpoint_checksum(
            &RunId::parse(vector["run_id"].as_str().unwrap()).unwrap(),
            Step::new(vector["step"].as_u64().unwrap()),
            vector["content_type"].as_str().unwrap(),
            &bytes(&vector["state_hex"]),
            &metadata,
            &chain,
            &tools,
        );
        assert_eq!(
            checksum.to_hex(),
            vector["expected"].as_str().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn the_rust_idempotency_key_matches_every_published_vector() {
    let document = published_document();
    let keys = document["idempotency_keys"].as_array().unwrap();
    assert!(!keys.is_empty());
    for key in keys {
        let run = RunKey::new(
            Tenant::parse(key["tenant"].as_str().unwrap())
                .unwrap_or_else(|_| Tenant::default_tenant()),
            RunId::parse(key["run_id"].as_str().unwrap()).unwrap(),
        );
        if run.tenant.as_str() != key["tenant"].as_str().unwrap() {
            // A tenant the server would refuse at its edge (the empty one) has no domain form.
            continue;
        }
        assert_eq!(
            idempotency_key(&run, key["call_id"].as_str().unwrap()),
            key["expected"].as_str().unwrap()
        );
    }
}
