//! Which fields of which request are counted before decoding, and their caps: one row per
//! repeated or map field that any request of `checkpoint.v1` can carry.
//!
//! Every request message of `CheckpointService` and `TaskService` was read for repeated and map
//! fields, nested messages included. Those listed in [`counted_fields`] are all there are:
//!
//! | RPC | field | cap |
//! | --- | --- | --- |
//! | Save | `messages` (5) | `--max-messages-per-save` |
//! | Save | `metadata` (7, a map) | `--max-metadata-entries` |
//! | ListCheckpoints | `metadata_filter` (6, a map) | `--max-metadata-entries` |
//! | Resume | `capabilities` (4, packed enum) | [`checkpointd_protocol::MAX_CLIENT_CAPABILITIES`] |
//! | LoadLatest | `capabilities` (4, packed enum) | the same |
//! | LoadAtStep | `capabilities` (6, packed enum) | the same |
//! | RecordToolResults | `results` (3) | [`checkpointd_protocol::MAX_TOOL_RESULTS_PER_BATCH`] |
//! | DeleteCheckpoints | `steps` (2, packed int64) | [`checkpointd_protocol::MAX_DELETE_STEPS`] |
//!
//! No other request has a repeated or map field, and none reachable from a request does either:
//! the nested messages are `Message` (role, content), `ToolResultInput` (scalars and bytes),
//! the map entries (key, value), `RetryPolicy` and `google.protobuf.Duration` (scalars), so the
//! scan never needs to descend into an element. Everything else is bounded by the request's
//! size: prost replaces a repeated singular string or bytes field instead of appending to it,
//! merges a repeated singular message into one, and drops unknown fields without keeping them,
//! so an unlisted field decodes to at most about its wire size.
//!
//! The health (`grpc.health.v1.HealthCheckRequest`: one string) and reflection
//! (`grpc.reflection.*.ServerReflectionRequest`: strings, an int32 and a oneof) requests are
//! upstream's and have no repeated or map field either.
//!
//! Why every counted field needs its count capped, and a size cap alone is not enough: an empty
//! element of a repeated message, string or map field costs two bytes on the wire (tag and a
//! zero length) but 24 to 100 bytes decoded (a `String` or struct, a map slot, and the vector's
//! doubling), so 16 MiB of them decode to hundreds of MiB. A packed varint scalar costs one wire
//! byte and decodes to 4 (`i32` enum) or 8 (`i64`) bytes, 16 with the vector's doubling: 16 MiB
//! of steps would decode to 256 MiB. With the caps the largest decoded count fields are a few
//! MiB beyond the bytes of their contents.

use super::SaveCaps;

/// `CheckpointService.Save`.
const SAVE_PATH: &str = "/checkpoint.v1.CheckpointService/Save";
/// `CheckpointService.RecordToolResults`.
const TOOL_RESULTS_PATH: &str = "/checkpoint.v1.CheckpointService/RecordToolResults";
/// `CheckpointService.ListCheckpoints`.
const LIST_CHECKPOINTS_PATH: &str = "/checkpoint.v1.CheckpointService/ListCheckpoints";
/// `CheckpointService.Resume`.
const RESUME_PATH: &str = "/checkpoint.v1.CheckpointService/Resume";
/// `CheckpointService.LoadLatest`.
const LOAD_LATEST_PATH: &str = "/checkpoint.v1.CheckpointService/LoadLatest";
/// `CheckpointService.LoadAtStep`.
const LOAD_AT_STEP_PATH: &str = "/checkpoint.v1.CheckpointService/LoadAtStep";
/// `CheckpointService.DeleteCheckpoints`.
const DELETE_CHECKPOINTS_PATH: &str = "/checkpoint.v1.CheckpointService/DeleteCheckpoints";

/// How a counted field's elements appear on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elements {
    /// One length-delimited field per element: a message, a string or a map entry.
    Delimited,
    /// Varint scalars (integers, enums): one varint field per element, or many in one packed,
    /// length-delimited field, each ending on a byte below 0x80.
    Varints,
}

/// Request memory per byte of the request budget: a request's bytes are held about three
/// times over at its peak (the received body, the decoded request, the store's copy; 4 x 16 MiB
/// Saves peak 195 MiB above idle, BENCHMARKS.md), rounded up.
pub const MEMORY_PER_BUDGET_BYTE: usize = 4;

/// What a delimited element costs the budget beyond its wire bytes. One-byte messages measured
/// 382 bytes of memory each at the peak of a Save of two million (its struct, its strings'
/// allocations, the vector's doubling and the store's copies): 96 budget bytes, rounded up.
const DELIMITED_ELEMENT_COST: usize = 128;
/// What a varint element costs beyond its one wire byte: an `i64` and the vector's doubling.
const VARINT_ELEMENT_COST: usize = 4;

impl Elements {
    /// The fewest wire bytes an element takes: a one-byte tag and a zero length when delimited
    /// (every counted field number is below 16), its one byte when a varint.
    pub const fn min_wire_bytes(self) -> usize {
        match self {
            Self::Delimited => 2,
            Self::Varints => 1,
        }
    }

    /// What an element costs the request budget once decoded, beyond its wire bytes.
    pub const fn decoded_cost(self) -> usize {
        match self {
            Self::Delimited => DELIMITED_ELEMENT_COST,
            Self::Varints => VARINT_ELEMENT_COST,
        }
    }
}

/// Where a field's cap comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// `--max-messages-per-save`.
    Messages,
    /// `--max-metadata-entries`.
    MetadataEntries,
    /// A protocol constant of `checkpointd_protocol`, documented in the proto.
    Fixed(usize),
}

impl Cap {
    /// The number of elements allowed under `caps`.
    pub fn limit(self, caps: SaveCaps) -> usize {
        match self {
            Self::Messages => caps.max_messages,
            Self::MetadataEntries => caps.max_metadata_entries,
            Self::Fixed(cap) => cap,
        }
    }

    /// The `serve` flag that sets it, when an operator can.
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Self::Messages => Some("--max-messages-per-save"),
            Self::MetadataEntries => Some("--max-metadata-entries"),
            Self::Fixed(_) => None,
        }
    }
}

/// One counted top-level field of a request.
#[derive(Clone, Copy, Debug)]
pub struct Counted {
    /// The field number.
    pub number: u64,
    pub elements: Elements,
    pub cap: Cap,
    /// `Message.field`, as the refusal names it.
    pub name: &'static str,
    /// What the caller can do instead, appended to the refusal.
    pub advice: &'static str,
}

const SAVE: &[Counted] = &[
    Counted {
        number: 5,
        elements: Elements::Delimited,
        cap: Cap::Messages,
        name: "SaveRequest.messages",
        advice: "save more often or in several steps",
    },
    Counted {
        number: 7,
        elements: Elements::Delimited,
        cap: Cap::MetadataEntries,
        name: "SaveRequest.metadata",
        advice: "keep large metadata in the state",
    },
];

const TOOL_RESULTS: &[Counted] = &[Counted {
    number: 3,
    elements: Elements::Delimited,
    cap: Cap::Fixed(checkpointd_protocol::MAX_TOOL_RESULTS_PER_BATCH),
    name: "RecordToolResultsRequest.results",
    advice: "send several batches",
}];

/// A filter matches only checkpoints that hold every one of its entries, and no checkpoint holds
/// more than `--max-metadata-entries`: a longer filter could never match, so the same flag caps it.
const LIST_CHECKPOINTS: &[Counted] = &[Counted {
    number: 6,
    elements: Elements::Delimited,
    cap: Cap::MetadataEntries,
    name: "ListCheckpointsRequest.metadata_filter",
    advice: "no checkpoint holds more metadata entries, so a longer filter never matches",
}];

const RESUME: &[Counted] = &[Counted {
    number: 4,
    elements: Elements::Varints,
    cap: Cap::Fixed(checkpointd_protocol::MAX_CLIENT_CAPABILITIES),
    name: "ResumeRequest.capabilities",
    advice: "declare each capability once",
}];

const LOAD_LATEST: &[Counted] = &[Counted {
    number: 4,
    elements: Elements::Varints,
    cap: Cap::Fixed(checkpointd_protocol::MAX_CLIENT_CAPABILITIES),
    name: "LoadLatestRequest.capabilities",
    advice: "declare each capability once",
}];

const LOAD_AT_STEP: &[Counted] = &[Counted {
    number: 6,
    elements: Elements::Varints,
    cap: Cap::Fixed(checkpointd_protocol::MAX_CLIENT_CAPABILITIES),
    name: "LoadAtStepRequest.capabilities",
    advice: "declare each capability once",
}];

const DELETE_CHECKPOINTS: &[Counted] = &[Counted {
    number: 2,
    elements: Elements::Varints,
    cap: Cap::Fixed(checkpointd_protocol::MAX_DELETE_STEPS),
    name: "DeleteCheckpointsRequest.steps",
    advice: "send several requests",
}];

/// The counted fields of the request to `path`; empty for an RPC whose request has none.
pub fn counted_fields(path: &str) -> &'static [Counted] {
    match path {
        SAVE_PATH => SAVE,
        TOOL_RESULTS_PATH => TOOL_RESULTS,
        LIST_CHECKPOINTS_PATH => LIST_CHECKPOINTS,
        RESUME_PATH => RESUME,
        LOAD_LATEST_PATH => LOAD_LATEST,
        LOAD_AT_STEP_PATH => LOAD_AT_STEP,
        DELETE_CHECKPOINTS_PATH => DELETE_CHECKPOINTS,
        _ => &[],
    }
}

/// The most a request of `length` wire bytes with these counted fields can cost the budget once
/// decoded: its length, and for each element the most its caps and that length allow, the
/// costliest kind of element first (delimited ones cost more per wire byte than varints).
pub fn worst_cost(fields: &[Counted], caps: SaveCaps, length: usize) -> usize {
    let mut wire_left = length;
    let mut extra = 0_usize;
    for kind in [Elements::Delimited, Elements::Varints] {
        for field in fields.iter().filter(|field| field.elements == kind) {
            let count = field.cap.limit(caps).min(wire_left / kind.min_wire_bytes());
            wire_left -= count * kind.min_wire_bytes();
            extra = extra.saturating_add(count.saturating_mul(kind.decoded_cost()));
        }
    }
    length.saturating_add(extra)
}

/// The most any request of at most `max_request_bytes` can cost the budget once decoded.
pub fn largest_cost(caps: SaveCaps, max_request_bytes: usize) -> usize {
    [
        SAVE,
        TOOL_RESULTS,
        LIST_CHECKPOINTS,
        RESUME,
        LOAD_LATEST,
        LOAD_AT_STEP,
        DELETE_CHECKPOINTS,
    ]
    .into_iter()
    .map(|fields| worst_cost(fields, caps, max_request_bytes))
    .max()
    .unwrap_or(max_request_bytes)
}

/// The most counted fields one request has (Save's two), sizing the scan's counters.
pub const MAX_COUNTED_PER_REQUEST: usize = 2;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use prost::Message as _;
    use prost_types::field_descriptor_proto::{Label, Type};
    use prost_types::{DescriptorProto, FileDescriptorSet};

    use super::*;

    /// Every message of the set by its full name (`.package.Outer.Inner`), nested ones included.
    fn by_name(set: &FileDescriptorSet) -> HashMap<String, DescriptorProto> {
        fn add(
            prefix: &str,
            message: &DescriptorProto,
            into: &mut HashMap<String, DescriptorProto>,
        ) {
            let name = format!("{prefix}.{}", message.name());
            for nested in &message.nested_type {
                add(&name, nested, into);
            }
            into.insert(name, message.clone());
        }
        let mut messages = HashMap::new();
        for file in &set.file {
            for message in &file.message_type {
                add(&format!(".{}", file.package()), message, &mut messages);
            }
        }
        messages
    }

    /// Every repeated field (maps included) of every request message, read from the descriptor
    /// set the server serves, is counted; and no message reachable from a request has a repeated
    /// field of its own, so the scan need not descend. A new repeated field fails this test
    /// until it is counted.
    #[test]
    fn every_repeated_field_of_every_request_is_counted() {
        let set = FileDescriptorSet::decode(checkpointd_protocol::FILE_DESCRIPTOR_SET).unwrap();
        let messages = by_name(&set);
        let mut found = Vec::new();
        for file in &set.file {
            for service in &file.service {
                for method in &service.method {
                    let path = format!("/{}.{}/{}", file.package(), service.name(), method.name());
                    let request = &messages[method.input_type()];
                    for field in &request.field {
                        if field.label() == Label::Repeated {
                            found.push((path.clone(), field.number() as u64));
                        }
                    }
                    // Messages nested in a request, at any depth: none has a repeated field.
                    let mut pending: Vec<&str> = request
                        .field
                        .iter()
                        .filter(|field| field.r#type() == Type::Message)
                        .map(|field| field.type_name())
                        .collect();
                    let mut seen = BTreeSet::new();
                    while let Some(name) = pending.pop() {
                        // Well-known types outside the set (Timestamp, Duration) hold scalars.
                        let Some(nested) = messages.get(name).filter(|_| seen.insert(name)) else {
                            continue;
                        };
                        for field in &nested.field {
                            assert!(
                                field.label() != Label::Repeated,
                                "{path}: {name}.{} is repeated; count it",
                                field.name()
                            );
                            if field.r#type() == Type::Message {
                                pending.push(field.type_name());
                            }
                        }
                    }
                }
            }
        }
        assert!(found.len() >= 6, "{found:?}");
        for (path, number) in &found {
            assert!(
                counted_fields(path)
                    .iter()
                    .any(|counted| counted.number == *number),
                "{path} field {number} is repeated but not counted"
            );
        }
        let paths: BTreeSet<_> = found.iter().map(|(path, _)| path.as_str()).collect();
        let listed: usize = paths.iter().map(|path| counted_fields(path).len()).sum();
        assert_eq!(listed, found.len(), "a counted field that is not repeated");
        assert!(
            paths
                .iter()
                .all(|path| counted_fields(path).len() <= MAX_COUNTED_PER_REQUEST)
        );
    }
}
