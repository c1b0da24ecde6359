//! A replay must match its call, over the wire: every journalled result and intent carries its
//! `arguments_digest` in every answer, and a call id journalled with other arguments is
//! ALREADY_EXISTS, reason ARGUMENTS_MISMATCH, naming the call and both digests in the
//! `ErrorInfo` metadata; bad digests are INVALID_ARGUMENT naming their field.

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    GetJournalRequest, LoadLatestRequest, RecordToolIntentRequest, RecordToolResultRequest,
    RecordToolResultsRequest, ResumeRequest, ToolResultInput,
};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::requests::{save, tool};
use crate::support::{Backend, spawn_app};

const RUN: &str = "run-1";

fn digest(fill: char) -> String {
    fill.to_string().repeat(64)
}

fn called(call_id: &str, with: &str) -> RecordToolResultRequest {
    RecordToolResultRequest {
        arguments_digest: with.to_owned(),
        ..tool(RUN, call_id, 1, "out")
    }
}

fn input(call_id: &str, with: &str) -> ToolResultInput {
    ToolResultInput {
        call_id: call_id.to_owned(),
        tool_name: "send_email".to_owned(),
        step: 1,
        output: b"out".to_vec(),
        is_error: false,
        arguments_digest: with.to_owned(),
    }
}

/// Asserts the refusal of `call_id` journalled with `stored` but called with `request`.
fn assert_mismatch(status: Status, call_id: &str, stored: &str, request: &str) {
    assert_eq!(status.code(), Code::AlreadyExists, "{status:?}");
    let info = status.get_details_error_info().expect("ErrorInfo");
    assert_eq!(info.reason, "ARGUMENTS_MISMATCH", "{status:?}");
    let meta = |key: &str| info.metadata.get(key).cloned().unwrap_or_default();
    assert_eq!(
        (
            meta("call_id"),
            meta("stored_digest"),
            meta("request_digest")
        ),
        (call_id.to_owned(), stored.to_owned(), request.to_owned())
    );
    for named in [call_id, stored, request] {
        assert!(status.message().contains(named), "{status:?}");
    }
}

fn assert_bad_field(status: Status, field: &str) {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let info = status.get_details_error_info().expect("ErrorInfo");
    assert_eq!(
        info.metadata.get("field").map(String::as_str),
        Some(field),
        "{status:?}"
    );
}

async fn journal_len(client: &mut CheckpointServiceClient<Channel>) -> usize {
    let request = GetJournalRequest { run_id: RUN.into() };
    let journal = client.get_journal(request).await.unwrap().into_inner();
    journal.entries.len()
}

async fn a_call_with_other_arguments_is_refused_and_digests_come_back_everywhere(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let (a, b) = (digest('a'), digest('b'));
    let first = client
        .record_tool_result(called("c1", &a))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.result.unwrap().arguments_digest, a);
    let same = client
        .record_tool_result(called("c1", &a))
        .await
        .unwrap()
        .into_inner();
    assert!(same.already_recorded);
    let len = journal_len(&mut client).await;
    let refused = client.record_tool_result(called("c1", &b)).await;
    assert_mismatch(refused.unwrap_err(), "c1", &a, &b);
    // A batch with one mismatching entry refuses whole: c2 is not journalled.
    let batch = RecordToolResultsRequest {
        run_id: RUN.into(),
        results: vec![input("c2", &a), input("c1", &b)],
        epoch: None,
    };
    assert_mismatch(
        client.record_tool_results(batch).await.unwrap_err(),
        "c1",
        &a,
        &b,
    );
    // An intent with a digest: a retry or its result with other arguments is refused.
    let intent = |with: &str| RecordToolIntentRequest {
        run_id: RUN.into(),
        call_id: "mail".into(),
        tool_name: "send_email".into(),
        step: 1,
        epoch: None,
        arguments_digest: with.to_owned(),
    };
    let recorded = client
        .record_tool_intent(intent(&a))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(recorded.intent.unwrap().arguments_digest, a);
    assert_mismatch(
        client.record_tool_intent(intent(&b)).await.unwrap_err(),
        "mail",
        &a,
        &b,
    );
    assert_mismatch(
        client
            .record_tool_result(called("mail", &b))
            .await
            .unwrap_err(),
        "mail",
        &a,
        &b,
    );
    assert_eq!(journal_len(&mut client).await, len + 1, "only the intent");

    // Bad digests name their field.
    for bad in ["A".repeat(64), "abc".to_owned()] {
        assert_bad_field(
            client
                .record_tool_result(called("c9", &bad))
                .await
                .unwrap_err(),
            "arguments_digest",
        );
        let batch = RecordToolResultsRequest {
            run_id: RUN.into(),
            results: vec![input("c8", &a), input("c9", &bad)],
            epoch: None,
        };
        assert_bad_field(
            client.record_tool_results(batch).await.unwrap_err(),
            "results[1].arguments_digest",
        );
        assert_bad_field(
            client.record_tool_intent(intent(&bad)).await.unwrap_err(),
            "arguments_digest",
        );
    }

    // Loads and Resume hand the digests back with the journal.
    client.save(save(RUN, 1, b"{}")).await.unwrap();
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: RUN.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(latest.tool_results[0].arguments_digest, a);
    assert_eq!(latest.tool_intents[0].arguments_digest, a);
    let resumed = client
        .resume(ResumeRequest {
            run_id: RUN.into(),
            capabilities: vec![checkpointd::proto::ClientCapability::InDoubtCalls as i32],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.tool_results[0].arguments_digest, a);
    assert_eq!(resumed.tool_intents[0].arguments_digest, a);
}

crate::for_each_backend!(a_call_with_other_arguments_is_refused_and_digests_come_back_everywhere);
