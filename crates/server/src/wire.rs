//! Domain records as `checkpoint.v1` messages: the conversions both the gRPC edge and the
//! Redis cache (which stores checkpointd's own protobuf messages) use, kept apart from either
//! so neither depends on the other.

use std::time::SystemTime;

use crate::proto;
use checkpointd_core::domain::{Message, ToolRecord};

pub fn timestamp(time: SystemTime) -> prost_types::Timestamp {
    prost_types::Timestamp::from(time)
}

pub fn message_to_wire(message: Message) -> proto::Message {
    proto::Message {
        role: message.role,
        content: message.content,
    }
}

pub fn message_from_wire(message: proto::Message) -> Message {
    Message {
        role: message.role,
        content: message.content,
    }
}

pub fn tool_to_wire(record: ToolRecord) -> proto::ToolResult {
    proto::ToolResult {
        call_id: record.call_id.as_str().to_owned(),
        tool_name: record.tool_name,
        step: record.step.as_i64(),
        output: record.output,
        is_error: record.is_error,
        seq: record.seq,
        recorded_at: Some(timestamp(record.recorded_at)),
        arguments_digest: record.arguments_digest.to_string(),
    }
}
