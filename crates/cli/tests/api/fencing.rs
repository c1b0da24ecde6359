//! Fencing: once a run is resumed again, writers holding the older epoch change nothing.

use checkpointd::proto::{LoadLatestRequest, ResumeRequest, SaveRequest};
use tonic::Code;

use crate::support::requests::{save, tool};
use crate::support::{Backend, spawn_app};

async fn a_save_with_a_superseded_epoch_is_rejected_and_changes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client.save(save("run-1", 1, b"one")).await.unwrap();
    let resume =
        |mut client: checkpointd::proto::checkpoint_service_client::CheckpointServiceClient<_>| async move {
            client
                .resume(ResumeRequest {
                    run_id: "run-1".into(),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .epoch
        };
    let first = resume(client.clone()).await;
    let second = resume(client.clone()).await;
    assert!(
        second > first,
        "epochs must strictly increase: {first} then {second}"
    );

    let zombie = client
        .save(SaveRequest {
            epoch: Some(first),
            ..save("run-1", 2, b"zombie")
        })
        .await
        .unwrap_err();
    assert_eq!(zombie.code(), Code::FailedPrecondition, "{zombie:?}");
    let mut zombie_tool = tool("run-1", "step-2/send_email/0", 2, "sent");
    zombie_tool.epoch = Some(first);
    let error = client.record_tool_result(zombie_tool).await.unwrap_err();
    assert_eq!(error.code(), Code::FailedPrecondition);

    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(latest.checkpoint.unwrap().state, b"one");
    assert!(latest.tool_results.is_empty());

    client
        .save(SaveRequest {
            epoch: Some(second),
            ..save("run-1", 2, b"owner")
        })
        .await
        .unwrap();
}

crate::for_each_backend!(a_save_with_a_superseded_epoch_is_rejected_and_changes_nothing);
