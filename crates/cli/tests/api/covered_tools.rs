//! `SaveRequest.tool_count` through a real server: a checkpoint covering the journal's first
//! entries verifies on load, one covering more than the journal holds is refused as
//! JOURNAL_BEHIND, and a Save without it covers the whole journal as before.

use std::collections::BTreeMap;

use checkpointd::proto::{
    LoadLatestRequest, RecordToolResultsRequest, SaveRequest, ToolResultInput, ValidateRequest,
};
use checkpointd_protocol::checksum::{
    CheckpointContent, MessageChain, ToolChain, ToolEntry, checkpoint_checksum, to_hex,
};
use tonic::Code;
use tonic_types::StatusExt;

use crate::support::requests::save;
use crate::support::{Backend, spawn_app};

/// The client's checksum of `request` (no metadata, no messages) over the first `count` of
/// the results `outputs` journalled for calls `c0`, `c1`, ...
fn checksum_over(request: &SaveRequest, outputs: &[&str], count: usize) -> String {
    let mut tools = ToolChain::EMPTY;
    for (index, output) in outputs.iter().take(count).enumerate() {
        tools.push(ToolEntry {
            call_id: &format!("c{index}"),
            tool_name: "search",
            step: 1,
            output: output.as_bytes(),
            is_error: false,
        });
    }
    to_hex(&checkpoint_checksum(
        CheckpointContent {
            run_id: &request.run_id,
            step: request.step as u64,
            content_type: &request.content_type,
            state: &request.state,
        },
        &BTreeMap::new(),
        &MessageChain::EMPTY,
        &tools,
    ))
}

async fn a_checkpoint_covering_the_journals_first_entries_verifies_and_more_is_refused(
    backend: Backend,
) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let outputs = ["a", "b", "c"];
    client
        .record_tool_results(RecordToolResultsRequest {
            run_id: "run-1".into(),
            epoch: None,
            results: outputs
                .iter()
                .enumerate()
                .map(|(index, output)| ToolResultInput {
                    call_id: format!("c{index}"),
                    tool_name: "search".into(),
                    step: 1,
                    output: output.as_bytes().to_vec(),
                    is_error: false,
                    arguments_digest: String::new(),
                })
                .collect(),
        })
        .await
        .unwrap();

    let mut first = SaveRequest {
        tool_count: Some(1),
        ..save("run-1", 1, b"{}")
    };
    first.checksum = Some(checksum_over(&first, &outputs, 1));
    client.save(first.clone()).await.unwrap();
    // An identical retry succeeds.
    assert!(
        client
            .save(first)
            .await
            .unwrap()
            .into_inner()
            .already_existed
    );
    let loaded = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(loaded.checkpoint.unwrap().tool_count, 1);
    assert_eq!(loaded.tool_results.len(), 3);

    let ahead = SaveRequest {
        tool_count: Some(4),
        ..save("run-1", 2, b"{}")
    };
    let status = client.save(ahead).await.unwrap_err();
    let info = status.get_details_error_info().unwrap();
    assert_eq!(
        (status.code(), info.reason.as_str()),
        (Code::FailedPrecondition, "JOURNAL_BEHIND")
    );

    // Without tool_count the checkpoint covers the whole journal, as before.
    let mut whole = save("run-1", 2, b"{}");
    whole.checksum = Some(checksum_over(&whole, &outputs, 3));
    client.save(whole).await.unwrap();
    let verdicts = client
        .validate(ValidateRequest {
            run_id: "run-1".into(),
            step: None,
        })
        .await
        .unwrap()
        .into_inner()
        .verdicts;
    assert!(verdicts.iter().all(|verdict| verdict.valid), "{verdicts:?}");
    assert_eq!(verdicts.len(), 2);
}

crate::for_each_backend!(
    a_checkpoint_covering_the_journals_first_entries_verifies_and_more_is_refused,
);
