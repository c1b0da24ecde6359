//! Old clients never change behaviour silently: a Resume that does not declare
//! `CLIENT_CAPABILITY_IN_DOUBT_CALLS` gets the answer a server gave before calls in doubt
//! existed (DATA_LOSS over a corrupt journal entry, a refusal over an intent without a result),
//! with nothing quarantined or rewound; one that declares it gets the fallback and the report.
//! And a Save past the end of the stored message log is a lost predecessor, not a client bug.

use checkpointd::proto::{
    ClientCapability, ListCheckpointsRequest, RecordToolIntentRequest, ResumeRequest,
    ResumeResponse, SaveRequest,
};
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::requests::{message, save, tool};
use crate::support::{Backend, TestApp, spawn_app};

const CALL: &str = "step-2/send_email/0";

/// The code, the reason and the `capability` metadata (empty when absent) of a refusal.
fn refusal(status: &Status) -> (Code, String, String) {
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    let capability = info.metadata.get("capability").cloned().unwrap_or_default();
    (status.code(), info.reason, capability)
}

/// A Resume as a client built before `capabilities` existed sends it, or as one that declares.
async fn resume(app: &TestApp, run_id: &str, declared: bool) -> Result<ResumeResponse, Status> {
    let capabilities = if declared {
        vec![ClientCapability::InDoubtCalls as i32]
    } else {
        Vec::new()
    };
    app.client()
        .await
        .resume(ResumeRequest {
            run_id: run_id.into(),
            capabilities,
            ..Default::default()
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Steps the run holds, with whether each is quarantined.
async fn steps(app: &TestApp, run_id: &str) -> Vec<(i64, bool)> {
    app.client()
        .await
        .list_checkpoints(ListCheckpointsRequest {
            run_id: run_id.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoints
        .iter()
        .map(|c| (c.step, !c.quarantine_reason.is_empty()))
        .collect()
}

/// Checkpoints at steps 1 and 2, the email's result journalled in between, then its stored
/// output damaged: step 2 covers a corrupt journal entry, step 1 does not.
async fn run_with_a_corrupt_result(app: &TestApp, run_id: &str) {
    let mut client = app.client().await;
    client.save(save(run_id, 1, b"{}")).await.unwrap();
    client
        .record_tool_result(tool(run_id, CALL, 2, r#"{"sent":true}"#))
        .await
        .unwrap();
    client.save(save(run_id, 2, b"{}")).await.unwrap();
    let (flip, not_intent) = match app.backend {
        Backend::Sqlite => (
            "output = CAST(X'00' || substr(output, 2) AS BLOB)",
            "intent = 0",
        ),
        _ => ("output = set_byte(output, 0, 0)", "NOT intent"),
    };
    app.raw_sql(&format!(
        "UPDATE tool_results SET {flip} \
         WHERE run_id = '{run_id}' AND call_id = '{CALL}' AND {not_intent}"
    ))
    .await;
}

async fn an_undeclared_resume_over_a_corrupt_journal_entry_is_data_loss(backend: Backend) {
    let app = spawn_app(backend).await;
    run_with_a_corrupt_result(&app, "corrupt").await;

    let old = resume(&app, "corrupt", false).await.unwrap_err();
    assert_eq!(
        refusal(&old),
        (Code::DataLoss, "CHECKPOINT_CORRUPT".into(), String::new()),
        "{backend:?}: {old:?}"
    );
    // Nothing restored past the corruption: no checkpoint quarantined on the way.
    assert_eq!(
        steps(&app, "corrupt").await,
        [(1, false), (2, false)],
        "{backend:?}"
    );

    let new = resume(&app, "corrupt", true)
        .await
        .expect("declared: no DATA_LOSS");
    assert_eq!(new.recovered_from_step, 1, "{backend:?}");
    assert_eq!(new.corrupt_call_ids, [CALL], "{backend:?}");
    assert!(
        new.in_doubt.iter().any(|c| c.call_id == CALL && c.corrupt),
        "{backend:?}: {:?}",
        new.in_doubt
    );
    assert_eq!(
        steps(&app, "corrupt").await,
        [(1, false), (2, true)],
        "{backend:?}"
    );

    // The corrupt entry is still journalled after the restored checkpoint: an old client
    // coming after the fallback is refused all the same.
    let again = resume(&app, "corrupt", false).await.unwrap_err();
    assert_eq!(again.code(), Code::DataLoss, "{backend:?}: {again:?}");
}

crate::for_each_durable_backend!(an_undeclared_resume_over_a_corrupt_journal_entry_is_data_loss,);

async fn an_undeclared_resume_over_an_intent_without_a_result_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client.save(save("intent", 1, b"{}")).await.unwrap();
    client
        .record_tool_intent(RecordToolIntentRequest {
            run_id: "intent".into(),
            call_id: CALL.into(),
            tool_name: "send_email".into(),
            step: 2,
            epoch: None,
            arguments_digest: String::new(),
        })
        .await
        .unwrap();

    let old = resume(&app, "intent", false).await.unwrap_err();
    assert_eq!(
        refusal(&old),
        (
            Code::FailedPrecondition,
            "CAPABILITY_REQUIRED".into(),
            "CLIENT_CAPABILITY_IN_DOUBT_CALLS".into()
        ),
        "{backend:?}: {old:?}"
    );

    let new = resume(&app, "intent", true).await.unwrap();
    let in_doubt: Vec<(&str, bool)> = new
        .in_doubt
        .iter()
        .map(|c| (c.call_id.as_str(), c.corrupt))
        .collect();
    assert_eq!(in_doubt, [(CALL, false)], "{backend:?}");
    assert_eq!(new.recovered_from_step, 1, "{backend:?}");
}

async fn an_undeclared_resume_of_a_clean_run_is_unchanged(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client.save(save("clean", 1, b"{}")).await.unwrap();
    client
        .record_tool_result(tool("clean", CALL, 1, "ok"))
        .await
        .unwrap();
    let old = resume(&app, "clean", false).await.unwrap();
    assert_eq!(
        (old.recovered_from_step, old.tool_results.len()),
        (1, 1),
        "{backend:?}"
    );
    // A capability this server does not know is ignored, not refused.
    let future = app
        .client()
        .await
        .resume(ResumeRequest {
            run_id: "clean".into(),
            capabilities: vec![ClientCapability::InDoubtCalls as i32, 9_999],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(future.recovered_from_step, 1, "{backend:?}");
}

async fn a_save_past_the_stored_log_is_message_log_behind(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client
        .save(SaveRequest {
            messages: vec![message("user", "a"), message("assistant", "b")],
            ..save("lost", 1, b"{}")
        })
        .await
        .unwrap();
    // As if a Save that appended "c" at step 2 had been acknowledged and then lost.
    let ahead = client
        .save(SaveRequest {
            messages: vec![message("user", "d")],
            message_offset: 3,
            ..save("lost", 3, b"{}")
        })
        .await
        .unwrap_err();
    assert_eq!(
        refusal(&ahead),
        (
            Code::FailedPrecondition,
            "MESSAGE_LOG_BEHIND".into(),
            String::new()
        ),
        "{backend:?}: {ahead:?}"
    );
    // Below the log's end is still a client bug.
    let behind = client
        .save(SaveRequest {
            messages: vec![message("user", "d")],
            message_offset: 1,
            ..save("lost", 3, b"{}")
        })
        .await
        .unwrap_err();
    let (code, reason, _) = refusal(&behind);
    assert_eq!(
        (code, reason.as_str()),
        (Code::InvalidArgument, "INVALID_ARGUMENT"),
        "{backend:?}: {behind:?}"
    );
}

mod every_backend {
    use super::*;
    crate::for_each_backend!(
        an_undeclared_resume_over_an_intent_without_a_result_is_refused,
        an_undeclared_resume_of_a_clean_run_is_unchanged,
        a_save_past_the_stored_log_is_message_log_behind,
    );
}
