//! The bytes kept in Redis: checkpointd's own protobuf messages, so the format is documented
//! in the proto files and decoding never trusts Redis more than the wire.

use std::time::SystemTime;

use prost::Message as _;

use crate::proto;
use crate::wire::{message_from_wire, message_to_wire, timestamp, tool_to_wire};
use checkpointd_core::domain::{
    ArgumentsDigest, CallId, Checksum, EntryKind, Epoch, Message, NewCheckpoint, RunKey,
    SavedCheckpoint, Step, StoredCheckpoint, ToolChain, ToolJournal, ToolRecord, ToolWindow,
    WindowChains,
};
use checkpointd_storage::store::Snapshot;

/// The header of the checkpoint a Save just committed.
pub fn saved_header(request: &NewCheckpoint, saved: &SavedCheckpoint) -> Vec<u8> {
    let header = proto::Checkpoint {
        checkpoint_id: saved.id.clone(),
        run_id: request.run.run_id.as_str().to_owned(),
        step: request.step.as_i64(),
        content_type: request.content_type.clone(),
        state: Vec::new(),
        messages: Vec::new(),
        metadata: request.metadata.clone().into_iter().collect(),
        epoch: request.epoch.get(),
        checksum: saved.checksum.to_hex(),
        created_at: Some(timestamp(saved.created_at)),
        message_count: request.message_offset + request.messages.len() as u64,
        tool_count: saved.tool_count,
        messages_offset: 0,
        label: request.label.clone().unwrap_or_default(),
    };
    with_state(&header, &request.state)
}

/// The header of a checkpoint read from the store.
pub fn stored_header(checkpoint: &StoredCheckpoint) -> Vec<u8> {
    let header = proto::Checkpoint {
        checkpoint_id: checkpoint.id.clone(),
        run_id: checkpoint.run_id.as_str().to_owned(),
        step: checkpoint.step.as_i64(),
        content_type: checkpoint.content_type.clone(),
        state: Vec::new(),
        messages: Vec::new(),
        metadata: checkpoint.metadata.clone().into_iter().collect(),
        epoch: checkpoint.epoch.get(),
        checksum: checkpoint.checksum.to_hex(),
        created_at: Some(timestamp(checkpoint.created_at)),
        message_count: checkpoint.message_count,
        tool_count: checkpoint.tool_count,
        messages_offset: 0,
        label: checkpoint.label.clone().unwrap_or_default(),
    };
    with_state(&header, &checkpoint.state)
}

/// Encodes `header` (its state left empty) followed by the state field, copying the state
/// once. Protobuf decoders merge fields in any order, so this is the message with its state.
fn with_state(header: &proto::Checkpoint, state: &Vec<u8>) -> Vec<u8> {
    let mut encoded = Vec::with_capacity(header.encoded_len() + state.len() + 16);
    header
        .encode(&mut encoded)
        .expect("a Vec grows to fit any message");
    if !state.is_empty() {
        prost::encoding::bytes::encode(STATE_FIELD, state, &mut encoded);
    }
    encoded
}

/// `Checkpoint.state`'s field number in checkpoint.proto.
const STATE_FIELD: u32 = 5;

pub fn message(message: &Message) -> Vec<u8> {
    message_to_wire(message.clone()).encode_to_vec()
}

pub fn tool(record: &ToolRecord) -> Vec<u8> {
    tool_to_wire(record.clone()).encode_to_vec()
}

/// Rebuilds a snapshot from cached bytes. `None` when anything fails to decode; whether the
/// content is *right* is for the caller to check against the store's head and the checksum.
pub fn snapshot(
    run: &RunKey,
    header: &[u8],
    messages: &[Vec<u8>],
    tools: &[Vec<u8>],
) -> Option<Snapshot> {
    let header = proto::Checkpoint::decode(header).ok()?;
    let count = usize::try_from(header.message_count).ok()?;
    let messages = messages
        .get(..count)?
        .iter()
        .map(|raw| proto::Message::decode(raw.as_slice()).map(message_from_wire))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    let mut chain = ToolChain::EMPTY;
    let tools = tools
        .iter()
        .map(|raw| {
            let wire = proto::ToolResult::decode(raw.as_slice()).ok()?;
            let mut record = ToolRecord {
                kind: EntryKind::Result,
                call_id: CallId::parse(&wire.call_id).ok()?,
                tool_name: wire.tool_name,
                step: Step::parse(wire.step).ok()?,
                output: wire.output,
                is_error: wire.is_error,
                seq: wire.seq,
                recorded_at: system_time(wire.recorded_at)?,
                chain: [0; 32],
                // Judged as on the wire: an entry holding anything else is not ours.
                arguments_digest: ArgumentsDigest::parse(
                    "arguments_digest",
                    &wire.arguments_digest,
                )
                .ok()?,
            };
            record.chain = chain.push_record(&record);
            Some(record)
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Snapshot {
        checkpoint: StoredCheckpoint {
            id: header.checkpoint_id,
            run_id: run.run_id.clone(),
            step: Step::parse(header.step).ok()?,
            epoch: Epoch::new(header.epoch),
            content_type: header.content_type,
            state: header.state,
            metadata: header.metadata.into_iter().collect(),
            messages,
            messages_from: 0,
            messages_end: header.message_count,
            chains: WindowChains::default(),
            message_count: header.message_count,
            tool_count: header.tool_count,
            checksum: Checksum::parse_hex(&header.checksum).ok()?,
            created_at: system_time(header.created_at)?,
            quarantine: None,
            label: Some(header.label).filter(|label| !label.is_empty()),
        },
        tools,
        tool_window: ToolWindow::WHOLE,
        verified: false,
        // An entry is served only while nothing lies above it (the cache's head check).
        has_newer: false,
    })
}

fn system_time(timestamp: Option<prost_types::Timestamp>) -> Option<SystemTime> {
    SystemTime::try_from(timestamp?).ok()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use checkpointd_core::domain::{RunId, Tenant};

    #[test]
    fn a_stored_checkpoint_survives_the_round_trip_through_its_cached_bytes() {
        let run = RunKey::new(Tenant::default_tenant(), RunId::parse("r").unwrap());
        let messages = vec![Message {
            role: "user".into(),
            content: b"hi".to_vec(),
        }];
        let checkpoint = StoredCheckpoint {
            id: "id-1".into(),
            run_id: run.run_id.clone(),
            step: Step::new(7),
            epoch: Epoch::new(2),
            content_type: "application/json".into(),
            state: vec![1, 2, 3, 0, 255],
            metadata: BTreeMap::from([("k".to_owned(), "v".to_owned())]),
            messages: messages.clone(),
            messages_from: 0,
            messages_end: 1,
            chains: WindowChains::default(),
            message_count: 1,
            tool_count: 0,
            checksum: Checksum::from_bytes([9; 32]),
            created_at: SystemTime::UNIX_EPOCH + std::time::Duration::from_micros(1_234_567),
            quarantine: None,
            label: Some("lg-1".into()),
        };
        let header = stored_header(&checkpoint);
        let encoded: Vec<Vec<u8>> = messages.iter().map(message).collect();

        let decoded = snapshot(&run, &header, &encoded, &[]).unwrap().checkpoint;

        assert_eq!(decoded.state, checkpoint.state);
        assert_eq!(decoded.messages, checkpoint.messages);
        assert_eq!(
            (decoded.id, decoded.step, decoded.epoch, decoded.checksum),
            (
                "id-1".to_owned(),
                Step::new(7),
                Epoch::new(2),
                checkpoint.checksum
            )
        );
        assert_eq!(decoded.metadata, checkpoint.metadata);
        assert_eq!(decoded.created_at, checkpoint.created_at);
        assert_eq!(decoded.label, checkpoint.label);
    }
}
