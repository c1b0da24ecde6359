//! The reference scenario: checkpoint every 3 steps, crash at step 5, resume from 3.

use checkpointd::proto::{ResumeRequest, SaveRequest};
use tonic::Code;

use crate::support::requests::{message, save};
use crate::support::{Backend, spawn_app};

/// An agent loop that saves every `every` steps, appending one message per step.
async fn run_steps(
    client: &mut checkpointd::proto::checkpoint_service_client::CheckpointServiceClient<
        tonic::transport::Channel,
    >,
    run_id: &str,
    steps: std::ops::RangeInclusive<i64>,
    every: i64,
    epoch: Option<u64>,
    mut offset: u64,
) {
    let mut pending = Vec::new();
    for step in steps {
        pending.push(message("assistant", &format!("step {step}")));
        if step % every == 0 {
            let request = SaveRequest {
                messages: std::mem::take(&mut pending),
                message_offset: offset,
                epoch,
                ..save(run_id, step, format!("{{\"step\":{step}}}").as_bytes())
            };
            offset += request.messages.len() as u64;
            client.save(request).await.unwrap();
        }
    }
}

async fn resume_after_a_crash_at_step_5_restores_step_3(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    run_steps(&mut client, "agent-1", 1..=5, 3, None, 0).await;

    let resumed = client
        .resume(ResumeRequest {
            run_id: "agent-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 3);
    assert!(!resumed.restarted_from_scratch);
    assert!(resumed.skipped_steps.is_empty());
    assert_eq!(resumed.epoch, 1);
    let checkpoint = resumed.checkpoint.unwrap();
    assert_eq!(checkpoint.state, b"{\"step\":3}");
    assert_eq!(checkpoint.messages.len(), 3);

    // The resumed agent continues from step 4 under the new epoch and finishes.
    run_steps(&mut client, "agent-1", 4..=6, 3, Some(resumed.epoch), 3).await;
    let again = client
        .resume(ResumeRequest {
            run_id: "agent-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.recovered_from_step, 6);
    assert_eq!(again.checkpoint.unwrap().messages.len(), 6);
}

async fn resume_of_a_new_run_starts_from_scratch(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let resumed = client
        .resume(ResumeRequest {
            run_id: "fresh".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(resumed.restarted_from_scratch);
    assert!(resumed.checkpoint.is_none());
    assert_eq!(resumed.recovered_from_step, 0);
    assert_eq!(resumed.epoch, 1);
    // A save without the epoch is fenced now that the run was resumed.
    let error = client.save(save("fresh", 1, b"{}")).await.unwrap_err();
    assert_eq!(error.code(), Code::FailedPrecondition);
    client
        .save(SaveRequest {
            epoch: Some(1),
            ..save("fresh", 1, b"{}")
        })
        .await
        .unwrap();
}

crate::for_each_backend!(
    resume_after_a_crash_at_step_5_restores_step_3,
    resume_of_a_new_run_starts_from_scratch,
);
