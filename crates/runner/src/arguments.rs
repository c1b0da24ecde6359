//! The arguments digest the runner journals with each tool call, and the check that a call
//! replayed from the journal is the call being made (DESIGN contract 14).
//!
//! The digest is the lower-case hex SHA-256 of the arguments' canonical JSON: object keys
//! sorted by code point (UTF-8 byte order) at every depth, no whitespace, strings and numbers
//! as `serde_json` writes them (non-ASCII characters as themselves, only `"`, `\` and control
//! characters escaped). The keys are sorted here, not left to `serde_json`'s map, so the digest
//! holds even where a dependency turns on its `preserve_order` feature.

use serde_json::Value;

use crate::agent_error::AgentError;

/// The canonical JSON of `arguments`.
pub fn canonical_json(arguments: &Value) -> String {
    let mut out = String::new();
    write_canonical(arguments, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, value)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        // A scalar's `Display` is its compact JSON.
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The digest journalled with a call made with `arguments`.
pub fn arguments_digest(arguments: &Value) -> String {
    checkpointd_protocol::checksum::arguments_digest(canonical_json(arguments).as_bytes())
}

/// Refuses to reuse a journalled entry whose digest is known and differs from the call's: the
/// step would otherwise take another call's result as its own. An empty stored digest (an
/// entry journalled before digests, or by a client that sends none) replays as before.
pub fn check_replay(call_id: &str, stored: &str, digest: &str) -> Result<(), AgentError> {
    if stored.is_empty() || stored == digest {
        return Ok(());
    }
    Err(AgentError::Fatal(format!(
        "call {call_id} is journalled with arguments digest {stored}, but this call's \
         arguments digest to {digest}: the step no longer makes the call it made before, so \
         its journalled result is not replayed"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth_without_whitespace() {
        let arguments = json!({"b": [2, {"z": 1, "a": "é"}], "a": null, "c": 1.5});
        assert_eq!(
            canonical_json(&arguments),
            r#"{"a":null,"b":[2,{"a":"é","z":1}],"c":1.5}"#
        );
    }

    #[test]
    fn the_digest_is_sha256_of_the_canonical_json_and_ignores_key_order() {
        // sha256("{}")
        assert_eq!(
            arguments_digest(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        assert_eq!(
            arguments_digest(&json!({"to": "a@x", "n": 1})),
            arguments_digest(&json!({"n": 1, "to": "a@x"}))
        );
        assert_ne!(
            arguments_digest(&json!({"to": "a@x"})),
            arguments_digest(&json!({"to": "b@x"}))
        );
    }

    #[test]
    fn only_a_known_different_digest_refuses_the_replay() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        assert!(check_replay("c", "", &a).is_ok());
        assert!(check_replay("c", &a, &a).is_ok());
        let refused = check_replay("step-1/lookup/0", &a, &b).unwrap_err();
        assert!(matches!(&refused, AgentError::Fatal(_)), "{refused:?}");
        for named in ["step-1/lookup/0", a.as_str(), b.as_str()] {
            assert!(refused.to_string().contains(named), "{refused}");
        }
    }
}
