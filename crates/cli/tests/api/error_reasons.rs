//! Machine-readable reasons: every refusal carries a `google.rpc.ErrorInfo` detail in domain
//! `checkpointd`, and a client tells the situations apart by its reason, never by the text.
//! One test per reason, through a real server and a real client decoding the details.

use checkpointd::config::ServerSettings;
use checkpointd::proto::{
    CancelRequest, ClaimRequest, CompleteRequest, EnqueueRequest, GetRequest, GetRunRequest,
    LoadAtStepRequest, LoadLatestRequest, RepairJournalRequest, ResumeRequest, SaveRequest,
    repair_journal_request,
};
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::requests::{save, tool};
use crate::support::{Backend, TestApp, spawn_app, spawn_app_with};

/// The code, the reason and the `field` metadata (empty when absent) a refusal carries.
fn reason(status: &Status) -> (Code, String, String) {
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    assert_eq!(info.domain, "checkpointd", "{status:?}");
    let field = info.metadata.get("field").cloned().unwrap_or_default();
    (status.code(), info.reason, field)
}

fn expect(status: Status, code: Code, expected: &str) {
    let (got_code, got_reason, _) = reason(&status);
    assert_eq!(
        (got_code, got_reason.as_str()),
        (code, expected),
        "{status:?}"
    );
}

async fn resumed_epoch(app: &TestApp, run_id: &str) -> u64 {
    app.client()
        .await
        .resume(ResumeRequest {
            run_id: run_id.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .epoch
}

async fn invalid_argument_names_the_field(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let negative = client.save(save("r", -1, b"x")).await.unwrap_err();
    assert_eq!(
        reason(&negative),
        (
            Code::InvalidArgument,
            "INVALID_ARGUMENT".into(),
            "step".into()
        )
    );
    let empty_run = client.save(save("", 1, b"x")).await.unwrap_err();
    assert_eq!(reason(&empty_run).2, "run_id");
    // Checksums are lower-case hex, as the server prints them: upper-case is refused.
    let saved = client.save(save("r", 1, b"x")).await.unwrap().into_inner();
    let upper = client
        .save(SaveRequest {
            checksum: Some(saved.checksum.to_uppercase()),
            ..save("r", 2, b"y")
        })
        .await
        .unwrap_err();
    assert_eq!(
        reason(&upper),
        (
            Code::InvalidArgument,
            "INVALID_ARGUMENT".into(),
            "checksum".into()
        )
    );
}

async fn a_client_checksum_that_differs_is_checksum_mismatch(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let error = client
        .save(SaveRequest {
            checksum: Some("0".repeat(64)),
            ..save("r", 1, b"x")
        })
        .await
        .unwrap_err();
    expect(error, Code::InvalidArgument, "CHECKSUM_MISMATCH");
}

async fn unknown_runs_checkpoints_and_tasks_have_their_own_reasons(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let run = client
        .get_run(GetRunRequest {
            run_id: "nobody".into(),
        })
        .await
        .unwrap_err();
    expect(run, Code::NotFound, "RUN_NOT_FOUND");
    client.save(save("r", 1, b"x")).await.unwrap();
    let step = client
        .load_at_step(LoadAtStepRequest {
            run_id: "r".into(),
            step: 9,
            ..Default::default()
        })
        .await
        .unwrap_err();
    expect(step, Code::NotFound, "CHECKPOINT_NOT_FOUND");
    let task = app
        .tasks()
        .await
        .get(GetRequest {
            // A well-formed task id that names no task.
            task_id: "0190b8a4-5b3c-7000-8000-000000000000".into(),
        })
        .await
        .unwrap_err();
    expect(task, Code::NotFound, "TASK_NOT_FOUND");
}

async fn different_content_at_a_step_is_step_conflict(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client.save(save("r", 1, b"x")).await.unwrap();
    let error = client.save(save("r", 1, b"other")).await.unwrap_err();
    expect(error, Code::AlreadyExists, "STEP_CONFLICT");
}

async fn a_label_on_another_step_is_label_taken(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let labelled = |step, state: &[u8]| SaveRequest {
        label: "lg-1".into(),
        ..save("r", step, state)
    };
    client.save(labelled(1, b"x")).await.unwrap();
    let error = client.save(labelled(2, b"y")).await.unwrap_err();
    expect(error, Code::AlreadyExists, "LABEL_TAKEN");
}

async fn fencing_refusals_say_which_fence(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client.save(save("r", 2, b"x")).await.unwrap();
    let first = resumed_epoch(&app, "r").await;
    let second = resumed_epoch(&app, "r").await;
    let stale = client
        .save(SaveRequest {
            epoch: Some(first),
            ..save("r", 3, b"y")
        })
        .await
        .unwrap_err();
    expect(stale, Code::FailedPrecondition, "STALE_EPOCH");
    let mut stale_tool = tool("r", "c1", 3, "out");
    stale_tool.epoch = Some(first);
    let stale_tool = client.record_tool_result(stale_tool).await.unwrap_err();
    expect(stale_tool, Code::FailedPrecondition, "STALE_EPOCH");
    let future = client
        .save(SaveRequest {
            epoch: Some(second + 5),
            ..save("r", 3, b"y")
        })
        .await
        .unwrap_err();
    expect(future, Code::FailedPrecondition, "EPOCH_NOT_ISSUED");
    let behind = client
        .save(SaveRequest {
            epoch: Some(second),
            ..save("r", 1, b"y")
        })
        .await
        .unwrap_err();
    expect(behind, Code::FailedPrecondition, "STEP_BEHIND_LATEST");
}

async fn queue_refusals_tell_a_lost_lease_from_a_task_state(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut tasks = app.tasks().await;
    let task = tasks
        .enqueue(EnqueueRequest {
            run_id: "r".into(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    let claimed = tasks
        .claim(ClaimRequest {
            worker_id: "w".into(),
            lease_duration: Some(prost_types::Duration {
                seconds: 60,
                nanos: 0,
            }),
            batch_size: 1,
        })
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(claimed.len(), 1);
    let zombie = tasks
        .complete(CompleteRequest {
            task_id: task.task_id.clone(),
            attempt: claimed[0].attempt + 1,
            result: Vec::new(),
        })
        .await
        .unwrap_err();
    expect(zombie, Code::FailedPrecondition, "LEASE_LOST");
    let cancel = || CancelRequest {
        task_id: task.task_id.clone(),
    };
    tasks.cancel(cancel()).await.unwrap();
    let again = tasks.cancel(cancel()).await.unwrap_err();
    expect(again, Code::FailedPrecondition, "TASK_STATE");
}

async fn a_repair_of_a_sound_call_is_journal_state(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client
        .record_tool_result(tool("r", "c1", 1, "fine"))
        .await
        .unwrap();
    let error = client
        .repair_journal(RepairJournalRequest {
            run_id: "r".into(),
            call_id: "c1".into(),
            actor: "alice".into(),
            repair: Some(repair_journal_request::Repair::Drop(true)),
        })
        .await
        .unwrap_err();
    expect(error, Code::FailedPrecondition, "JOURNAL_STATE");
}

async fn an_oversized_request_is_too_large(backend: Backend) {
    let app = spawn_app_with(
        backend,
        ServerSettings {
            max_request_bytes: 1024,
            ..ServerSettings::default()
        },
    )
    .await;
    let error = app
        .client()
        .await
        .save(save("r", 1, &[7; 4096]))
        .await
        .unwrap_err();
    expect(error, Code::ResourceExhausted, "TOO_LARGE");
}

async fn corruption_says_whether_any_checkpoint_is_left(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client.save(save("r", 1, b"one")).await.unwrap();
    client.save(save("r", 2, b"two")).await.unwrap();
    app.corrupt_state("r", 2).await;
    let at = client
        .load_at_step(LoadAtStepRequest {
            run_id: "r".into(),
            step: 2,
            ..Default::default()
        })
        .await
        .unwrap_err();
    expect(at, Code::DataLoss, "CHECKPOINT_CORRUPT");
    app.corrupt_state("r", 1).await;
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "r".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    expect(latest, Code::DataLoss, "ALL_CHECKPOINTS_CORRUPT");
}

crate::for_each_backend!(
    invalid_argument_names_the_field,
    a_client_checksum_that_differs_is_checksum_mismatch,
    unknown_runs_checkpoints_and_tasks_have_their_own_reasons,
    different_content_at_a_step_is_step_conflict,
    a_label_on_another_step_is_label_taken,
    fencing_refusals_say_which_fence,
    queue_refusals_tell_a_lost_lease_from_a_task_state,
    a_repair_of_a_sound_call_is_journal_state,
    an_oversized_request_is_too_large,
);

/// Corruption is made behind the server's back, in its database: the durable backends.
mod durable {
    use super::*;

    crate::for_each_durable_backend!(corruption_says_whether_any_checkpoint_is_left);
}
