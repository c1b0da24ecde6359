//! RecordToolResults through a real server: a batch journals like that many RecordToolResult
//! calls, all or none, fenced once, and a batch over the cap is refused before it is decoded.

use checkpointd::proto::{
    LoadLatestRequest, RecordToolResultsRequest, ResumeRequest, ToolResultInput,
};
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::requests::{save, tool};
use crate::support::{Backend, spawn_app};

fn input(call_id: &str, output: &str) -> ToolResultInput {
    ToolResultInput {
        call_id: call_id.to_owned(),
        tool_name: "send_email".to_owned(),
        step: 2,
        output: output.as_bytes().to_vec(),
        is_error: false,
        arguments_digest: String::new(),
    }
}

fn batch(epoch: Option<u64>, results: Vec<ToolResultInput>) -> RecordToolResultsRequest {
    RecordToolResultsRequest {
        run_id: "run-1".to_owned(),
        epoch,
        results,
    }
}

/// The code, the `ErrorInfo` reason and its `field` metadata (empty when absent).
fn refusal(status: &Status) -> (Code, String, String) {
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    let field = info.metadata.get("field").cloned().unwrap_or_default();
    (status.code(), info.reason, field)
}

async fn a_batch_answers_each_entry_in_order_like_single_calls(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let single = client
        .record_tool_result(tool("run-1", "c1", 1, "one"))
        .await
        .unwrap()
        .into_inner();
    let answer = client
        .record_tool_results(batch(
            None,
            vec![
                input("c2", "two"),
                input("c1", "ignored"),
                input("c2", "ignored too"),
                input("c3", "three"),
            ],
        ))
        .await
        .unwrap()
        .into_inner();
    let got: Vec<_> = answer
        .results
        .iter()
        .map(|r| {
            let result = r.result.as_ref().unwrap();
            (result.call_id.as_str(), result.seq, r.already_recorded)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("c2", 2, false),
            ("c1", 1, true),
            ("c2", 2, true),
            ("c3", 3, false)
        ]
    );
    assert_eq!(answer.results[1].result, single.result);
    assert_eq!(answer.results[2].result, answer.results[0].result);

    // The checkpoint covers the batch, and the journal verifies on load.
    client.save(save("run-1", 3, b"{}")).await.unwrap();
    let loaded = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(loaded.checkpoint.unwrap().tool_count, 3);
    let outputs: Vec<_> = loaded
        .tool_results
        .iter()
        .map(|r| r.output.clone())
        .collect();
    assert_eq!(
        outputs,
        [b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
    );
}

async fn an_invalid_entry_or_a_stale_epoch_refuses_the_whole_batch(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let mut nameless = input("c3", "x");
    nameless.tool_name.clear();
    for (bad, field) in [
        (input("", "x"), "results[1].call_id"),
        (nameless, "results[1].tool_name"),
        (
            ToolResultInput {
                step: -1,
                ..input("c3", "x")
            },
            "results[1].step",
        ),
    ] {
        let status = client
            .record_tool_results(batch(None, vec![input("c1", "x"), bad]))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&status),
            (
                Code::InvalidArgument,
                "INVALID_ARGUMENT".into(),
                field.into()
            )
        );
    }
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.epoch, 1);
    let status = client
        .record_tool_results(batch(Some(0), vec![input("c1", "x"), input("c2", "y")]))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(&status),
        (
            Code::FailedPrecondition,
            "STALE_EPOCH".into(),
            String::new()
        )
    );
    // Nothing of the refused batches was journalled.
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(resumed.tool_results.is_empty());
    let answer = client
        .record_tool_results(batch(Some(resumed.epoch), vec![input("c1", "x")]))
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.results[0].already_recorded);
}

async fn a_batch_over_the_cap_is_refused_as_too_large(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let cap = checkpointd_protocol::MAX_TOOL_RESULTS_PER_BATCH;
    let over = (0..=cap).map(|i| input(&format!("c{i}"), "")).collect();
    let status = client
        .record_tool_results(batch(None, over))
        .await
        .unwrap_err();
    let (code, reason, _) = refusal(&status);
    assert_eq!(
        (code, reason.as_str()),
        (Code::ResourceExhausted, "TOO_LARGE")
    );
    let full = (0..cap).map(|i| input(&format!("c{i}"), "")).collect();
    let answer = client
        .record_tool_results(batch(None, full))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.results.len(), cap);
    assert_eq!(
        answer.results[cap - 1].result.as_ref().unwrap().seq,
        cap as u64
    );
}

crate::for_each_backend!(
    a_batch_answers_each_entry_in_order_like_single_calls,
    an_invalid_entry_or_a_stale_epoch_refuses_the_whole_batch,
    a_batch_over_the_cap_is_refused_as_too_large,
);
