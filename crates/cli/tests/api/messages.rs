//! The message log: appends at the right offset, gaps rejected, truncation on rewind.

use checkpointd::proto::{LoadLatestRequest, SaveRequest};
use tonic::Code;

use crate::support::requests::{message, save};
use crate::support::{Backend, spawn_app};

pub fn contents(checkpoint: &checkpointd::proto::Checkpoint) -> Vec<String> {
    checkpoint
        .messages
        .iter()
        .map(|m| String::from_utf8(m.content.clone()).unwrap())
        .collect()
}

async fn appends_at_the_log_length_are_accepted_and_gaps_rejected(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client
        .save(SaveRequest {
            messages: vec![message("user", "a"), message("assistant", "b")],
            ..save("run-1", 1, b"{}")
        })
        .await
        .unwrap();
    let gap = client
        .save(SaveRequest {
            messages: vec![message("user", "d")],
            message_offset: 3,
            ..save("run-1", 2, b"{}")
        })
        .await
        .unwrap_err();
    // Past the end: the stored log lost what the client saw, so it resyncs (see
    // protocol_evolution.rs for the reason).
    assert_eq!(gap.code(), Code::FailedPrecondition, "{gap:?}");
    assert!(gap.message().contains("Resume"), "{}", gap.message());
    client
        .save(SaveRequest {
            messages: vec![message("user", "c")],
            message_offset: 2,
            ..save("run-1", 2, b"{}")
        })
        .await
        .unwrap();
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(contents(&latest), ["a", "b", "c"]);
}

crate::for_each_backend!(appends_at_the_log_length_are_accepted_and_gaps_rejected,);
