//! Request builders that keep tests short.

use checkpointd::proto::{Message, RecordToolResultRequest, SaveRequest};

pub fn save(run_id: &str, step: i64, state: &[u8]) -> SaveRequest {
    SaveRequest {
        run_id: run_id.to_owned(),
        step,
        content_type: "application/json".to_owned(),
        state: state.to_vec(),
        ..SaveRequest::default()
    }
}

pub fn message(role: &str, content: &str) -> Message {
    Message {
        role: role.to_owned(),
        content: content.as_bytes().to_vec(),
    }
}

pub fn tool(run_id: &str, call_id: &str, step: i64, output: &str) -> RecordToolResultRequest {
    RecordToolResultRequest {
        run_id: run_id.to_owned(),
        call_id: call_id.to_owned(),
        tool_name: "send_email".to_owned(),
        step,
        output: output.as_bytes().to_vec(),
        ..RecordToolResultRequest::default()
    }
}
