//! The tool journal: results survive rewinds, and a retried call id returns the original.

use checkpointd::proto::{ResumeRequest, SaveRequest};

use crate::support::requests::{save, tool};
use crate::support::{Backend, spawn_app};

async fn resume_returns_results_recorded_after_the_checkpoint(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client
        .record_tool_result(tool("run-1", "step-2/send_email/0", 2, "sent #1"))
        .await
        .unwrap();
    client.save(save("run-1", 3, b"{}")).await.unwrap();
    // Step 4 sends an email, then the agent crashes before its next checkpoint.
    client
        .record_tool_result(tool("run-1", "step-4/send_email/0", 4, "sent #2"))
        .await
        .unwrap();

    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 3);
    let calls: Vec<_> = resumed
        .tool_results
        .iter()
        .map(|r| (r.call_id.as_str(), r.output.as_slice(), r.seq))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("step-2/send_email/0", b"sent #1".as_slice(), 1),
            ("step-4/send_email/0", b"sent #2".as_slice(), 2),
        ]
    );
    // The checkpoint at step 3 covers only the result journalled before it.
    assert_eq!(resumed.checkpoint.unwrap().tool_count, 1);

    // Re-executing step 4 after the rewind reuses the journal: same call id, stored output.
    let mut replay = tool("run-1", "step-4/send_email/0", 4, "sent AGAIN");
    replay.epoch = Some(resumed.epoch);
    let replayed = client
        .record_tool_result(replay)
        .await
        .unwrap()
        .into_inner();
    assert!(replayed.already_recorded);
    assert_eq!(replayed.result.unwrap().output, b"sent #2");

    client
        .save(SaveRequest {
            epoch: Some(resumed.epoch),
            ..save("run-1", 4, b"{}")
        })
        .await
        .unwrap();
    let again = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.recovered_from_step, 4);
    assert_eq!(again.tool_results.len(), 2);
}

async fn a_repeated_call_id_returns_the_original_result(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let first = client
        .record_tool_result(tool("run-1", "call-a", 1, "original"))
        .await
        .unwrap()
        .into_inner();
    assert!(!first.already_recorded);
    let second = client
        .record_tool_result(tool("run-1", "call-a", 1, "different"))
        .await
        .unwrap()
        .into_inner();
    assert!(second.already_recorded);
    assert_eq!(second.result, first.result);
}

crate::for_each_backend!(
    resume_returns_results_recorded_after_the_checkpoint,
    a_repeated_call_id_returns_the_original_result,
);
