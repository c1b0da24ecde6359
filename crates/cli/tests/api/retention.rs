//! Retention: each policy keeps exactly what it promises; pinned, latest-valid and journal-base
//! checkpoints survive; Resume works after pruning; a resume in flight fences the pruner.

use std::time::Duration;

use checkpointd::config::RetentionSettings;
use checkpointd::maintenance::{PruneReport, Pruner};
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    ListCheckpointsRequest, LoadLatestRequest, PinCheckpointRequest, ResumeRequest,
    SetRetentionRequest, UnpinCheckpointRequest,
};
use checkpointd_core::domain::{RunId, RunKey, Step, Tenant};
use checkpointd_core::error::Error;
use checkpointd_core::retention::RetentionPolicy;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

use crate::support::requests::{message, save, tool};
use crate::support::validate_run;
use crate::support::{Backend, TestApp, spawn_app};

type Client = CheckpointServiceClient<Channel>;

/// Saves steps `from..=to`, each after journalling one tool result and with one new message.
pub async fn seed(client: &mut Client, run: &str, from: i64, to: i64) {
    for step in from..=to {
        let call = format!("step-{step}/lookup/0");
        client
            .record_tool_result(tool(run, &call, step, &format!("result {step}")))
            .await
            .unwrap();
        let mut request = save(run, step, format!("{{\"step\":{step}}}").as_bytes());
        request.message_offset = (step - 1) as u64;
        request.messages = vec![message("assistant", &format!("m{step}"))];
        client.save(request).await.unwrap();
    }
}

pub async fn steps(client: &mut Client, run: &str) -> Vec<i64> {
    client
        .list_checkpoints(ListCheckpointsRequest {
            run_id: run.into(),
            ..ListCheckpointsRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoints
        .iter()
        .map(|summary| summary.step)
        .collect()
}

async fn set_policy(client: &mut Client, run: &str, policy: &str) {
    client
        .set_retention(SetRetentionRequest {
            run_id: run.into(),
            policy: policy.into(),
        })
        .await
        .unwrap();
}

async fn pin(client: &mut Client, run: &str, step: i64) {
    client
        .pin_checkpoint(PinCheckpointRequest {
            run_id: run.into(),
            step,
        })
        .await
        .unwrap();
}

fn pruner(app: &TestApp, default_policy: RetentionPolicy) -> Pruner {
    // Batches of two: every multi-checkpoint prune below spans several transactions.
    let settings = RetentionSettings {
        default_policy,
        prune_interval: Duration::ZERO,
        batch_size: 2,
    };
    Pruner::new(app.engine.clone(), app.retention.clone(), settings)
}

pub async fn prune(app: &TestApp, default_policy: RetentionPolicy) -> PruneReport {
    pruner(app, default_policy)
        .pass(false, &CancellationToken::new(), |_| {})
        .await
        .unwrap()
}

fn key(run: &str) -> RunKey {
    RunKey::new(Tenant::default_tenant(), RunId::parse(run).unwrap())
}

async fn latest_only_keeps_the_latest_valid_and_the_pinned(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-a", 1, 5).await;
    seed(&mut client, "run-b", 1, 3).await;
    pin(&mut client, "run-a", 2).await;
    set_policy(&mut client, "run-a", "latest_only").await;

    let report = prune(&app, RetentionPolicy::All).await;

    assert_eq!(steps(&mut client, "run-a").await, vec![2, 5]);
    // run-b follows the server default, `all`.
    assert_eq!(steps(&mut client, "run-b").await, vec![1, 2, 3]);
    assert_eq!((report.runs_pruned, report.checkpoints), (1, 3));
    // Under a keep-everything default, runs that set no policy are not even read.
    assert_eq!(report.runs_scanned, 1);
}

async fn keep_last_keeps_the_last_n_and_unpinning_releases(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 6).await;
    pin(&mut client, "run-1", 1).await;
    set_policy(&mut client, "run-1", "keep_last:3").await;
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![1, 4, 5, 6]);

    // A second source pins the same step, as an approval wait would.
    let pinned = app
        .retention
        .pin(&key("run-1"), Some(Step::new(1)), "approval:t1")
        .await;
    assert_eq!(pinned.unwrap(), Some(Step::new(1)));
    let mut unpin = UnpinCheckpointRequest {
        run_id: "run-1".into(),
        step: 1,
        all_sources: false,
    };
    let reply = client.unpin_checkpoint(unpin.clone()).await.unwrap();
    assert!(reply.into_inner().unpinned);
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![1, 4, 5, 6]);

    // The operator's pin is gone; the approval's stays until all_sources.
    let reply = client.unpin_checkpoint(unpin.clone()).await.unwrap();
    assert!(!reply.into_inner().unpinned);
    unpin.all_sources = true;
    let reply = client.unpin_checkpoint(unpin).await.unwrap();
    assert!(reply.into_inner().unpinned);
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![4, 5, 6]);
}

async fn the_server_default_applies_to_runs_without_a_policy(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "keeps-all", 1, 3).await;
    seed(&mut client, "follows-default", 1, 3).await;
    set_policy(&mut client, "keeps-all", "all").await;
    prune(&app, RetentionPolicy::LatestOnly).await;
    assert_eq!(steps(&mut client, "keeps-all").await, vec![1, 2, 3]);
    assert_eq!(steps(&mut client, "follows-default").await, vec![3]);

    // An empty policy hands the run back to the default.
    set_policy(&mut client, "keeps-all", "").await;
    prune(&app, RetentionPolicy::LatestOnly).await;
    assert_eq!(steps(&mut client, "keeps-all").await, vec![3]);
}

async fn an_unknown_policy_is_invalid_argument(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for bad in ["keep_last:0", "newest", "max_age:soon"] {
        let status = client
            .set_retention(SetRetentionRequest {
                run_id: "run-1".into(),
                policy: bad.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{bad}");
    }
    let status = client
        .pin_checkpoint(PinCheckpointRequest {
            run_id: "run-1".into(),
            step: 9,
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
}

async fn resume_works_after_pruning(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 5).await;
    // Step 6 journals a result, then the agent crashes before its checkpoint.
    client
        .record_tool_result(tool("run-1", "step-6/lookup/0", 6, "result 6"))
        .await
        .unwrap();
    set_policy(&mut client, "run-1", "latest_only").await;
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![5]);

    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 5);
    let checkpoint = resumed.checkpoint.unwrap();
    let contents: Vec<&[u8]> = checkpoint
        .messages
        .iter()
        .map(|m| m.content.as_slice())
        .collect();
    assert_eq!(contents, vec![&b"m1"[..], b"m2", b"m3", b"m4", b"m5"]);
    assert_eq!(resumed.tool_results.len(), 6);

    // The run carries on from the pruned state.
    let mut next = save("run-1", 6, b"{\"step\":6}");
    next.message_offset = 5;
    next.messages = vec![message("assistant", "m6")];
    next.epoch = Some(resumed.epoch);
    client.save(next).await.unwrap();
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(latest.checkpoint.unwrap().messages.len(), 6);
    let verdicts = validate_run(&mut client, "run-1").await;
    assert!(verdicts.iter().all(|verdict| verdict.valid), "{verdicts:?}");
}

async fn a_resume_in_flight_fences_the_pruner(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 3).await;
    set_policy(&mut client, "run-1", "latest_only").await;
    let plan = pruner(&app, RetentionPolicy::All)
        .plan(&key("run-1"))
        .await
        .unwrap()
        .expect("steps 1 and 2 are prunable");
    assert_eq!(plan.steps.len(), 2);

    // A Resume begins between the plan and its deletes.
    client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let refused = app
        .retention
        .prune(&plan.run, plan.epoch, &plan.steps)
        .await;
    assert!(matches!(refused, Err(Error::StaleEpoch(_))), "{refused:?}");
    assert_eq!(steps(&mut client, "run-1").await, vec![1, 2, 3]);

    // The next pass plans at the new epoch.
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![3]);
}

async fn the_checkpoint_the_journal_tail_depends_on_survives(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 3).await;
    // Journalled for step 2 after checkpoint 3 was saved: replaying it starts from step 1.
    client
        .record_tool_result(tool("run-1", "step-2/lookup/1", 2, "late"))
        .await
        .unwrap();
    set_policy(&mut client, "run-1", "latest_only").await;
    prune(&app, RetentionPolicy::All).await;
    assert_eq!(steps(&mut client, "run-1").await, vec![1, 3]);
}

async fn the_store_refuses_to_delete_the_latest_or_a_pinned_checkpoint(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    seed(&mut client, "run-1", 1, 3).await;
    pin(&mut client, "run-1", 1).await;
    let store = &app.retention;
    let facts = store.retention_facts(&key("run-1")).await.unwrap().unwrap();
    let all: Vec<_> = facts.checkpoints.iter().map(|facts| facts.step).collect();
    // Whatever a buggy plan asks, only the unpinned step below the latest goes.
    let deleted = store.prune(&key("run-1"), facts.epoch, &all).await.unwrap();
    assert_eq!(deleted, 1);
    assert_eq!(steps(&mut client, "run-1").await, vec![1, 3]);
}

crate::for_each_backend!(
    latest_only_keeps_the_latest_valid_and_the_pinned,
    keep_last_keeps_the_last_n_and_unpinning_releases,
    the_server_default_applies_to_runs_without_a_policy,
    an_unknown_policy_is_invalid_argument,
    resume_works_after_pruning,
    a_resume_in_flight_fences_the_pruner,
    the_checkpoint_the_journal_tail_depends_on_survives,
    the_store_refuses_to_delete_the_latest_or_a_pinned_checkpoint,
);
