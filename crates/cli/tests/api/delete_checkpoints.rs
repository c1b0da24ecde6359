//! DeleteCheckpoints through a real server: chosen checkpoints go at once, the previous one
//! becomes the latest everywhere (LoadLatest, GetRun, Resume, the Redis cache), later Saves go
//! on, pins are kept and reported, and the request is bounded and fenced as documented.

use checkpointd::config::CacheSettings;
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    DeleteCheckpointsRequest, DeleteCheckpointsResponse, GetRunRequest, PinCheckpointRequest,
    ResumeRequest, RunHead,
};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::requests::{message, save, tool};
use crate::support::{
    Backend, PgSchema, cached_step, latest_step, redis_url, serve_cached, spawn_app, unique_prefix,
};

type Client = CheckpointServiceClient<Channel>;

/// Saves steps 1..=`last` of `run_id`, one message each, with a tool result after step 1.
async fn save_steps(client: &mut Client, run_id: &str, last: i64) {
    for step in 1..=last {
        let mut request = save(run_id, step, format!("{{\"step\":{step}}}").as_bytes());
        request.message_offset = step as u64 - 1;
        request.messages = vec![message("assistant", &format!("reply {step}"))];
        client.save(request).await.unwrap();
        if step == 1 {
            client
                .record_tool_result(tool(run_id, "call-1", 1, "sent"))
                .await
                .unwrap();
        }
    }
}

async fn delete(
    client: &mut Client,
    run_id: &str,
    steps: &[i64],
    epoch: Option<u64>,
) -> Result<DeleteCheckpointsResponse, Status> {
    client
        .delete_checkpoints(DeleteCheckpointsRequest {
            run_id: run_id.into(),
            steps: steps.to_vec(),
            epoch,
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn head(client: &mut Client, run_id: &str) -> RunHead {
    client
        .get_run(GetRunRequest {
            run_id: run_id.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .run
        .unwrap()
}

/// The code and `ErrorInfo` reason of a refusal.
fn reason(status: &Status) -> (Code, String) {
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    (status.code(), info.reason)
}

async fn deleting_the_latest_makes_the_previous_one_latest(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    save_steps(&mut client, "run-1", 3).await;

    let answer = delete(&mut client, "run-1", &[3, 3, 42], None)
        .await
        .unwrap();
    assert_eq!(answer.deleted_checkpoints, 1);
    assert!(answer.pinned_steps.is_empty());
    assert_eq!(latest_step(&mut client, "run-1").await, 2);
    let run = head(&mut client, "run-1").await;
    assert_eq!(run.latest_step, Some(2));
    assert_eq!(run.latest_valid_step, Some(2));
    assert_eq!(run.checkpoint_count, 2);
    // The log and the journal are untouched.
    assert_eq!((run.message_count, run.tool_count), (3, 1));
    // A retry deletes nothing and still succeeds.
    let again = delete(&mut client, "run-1", &[3], None).await.unwrap();
    assert_eq!(again.deleted_checkpoints, 0);

    // The run goes on: the next Save continues the log where it stands.
    let mut next = save("run-1", 4, b"{\"step\":4}");
    next.message_offset = run.message_count;
    next.messages = vec![message("assistant", "reply 4")];
    client.save(next).await.unwrap();
    assert_eq!(latest_step(&mut client, "run-1").await, 4);

    // Resume restores from what remains and hands back the whole journal.
    save_steps(&mut client, "run-2", 2).await;
    delete(&mut client, "run-2", &[2], None).await.unwrap();
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-2".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.checkpoint.unwrap().step, 1);
    assert_eq!(resumed.tool_results.len(), 1);
}

#[tokio::test]
async fn deleting_the_latest_makes_the_previous_one_latest_memory() {
    deleting_the_latest_makes_the_previous_one_latest(Backend::Memory).await;
}

#[tokio::test]
async fn deleting_the_latest_makes_the_previous_one_latest_sqlite() {
    deleting_the_latest_makes_the_previous_one_latest(Backend::Sqlite).await;
}

#[tokio::test]
async fn deleting_the_latest_makes_the_previous_one_latest_postgres() {
    deleting_the_latest_makes_the_previous_one_latest(Backend::Postgres).await;
}

#[tokio::test]
async fn pinned_checkpoints_are_kept_and_named() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut client = app.client().await;
    save_steps(&mut client, "run-1", 3).await;
    client
        .pin_checkpoint(PinCheckpointRequest {
            run_id: "run-1".into(),
            step: 2,
        })
        .await
        .unwrap();
    let answer = delete(&mut client, "run-1", &[1, 2], None).await.unwrap();
    assert_eq!(answer.deleted_checkpoints, 1);
    assert_eq!(answer.pinned_steps, vec![2]);
    assert_eq!(head(&mut client, "run-1").await.checkpoint_count, 2);
}

#[tokio::test]
async fn bad_requests_are_refused_with_their_reasons_and_change_nothing() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut client = app.client().await;
    save_steps(&mut client, "run-1", 2).await;
    let epoch = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .epoch;

    let stale = delete(&mut client, "run-1", &[1], Some(epoch - 1)).await;
    assert_eq!(
        reason(&stale.unwrap_err()),
        (Code::FailedPrecondition, "STALE_EPOCH".to_owned())
    );
    let unissued = delete(&mut client, "run-1", &[1], Some(epoch + 1)).await;
    assert_eq!(
        reason(&unissued.unwrap_err()),
        (Code::FailedPrecondition, "EPOCH_NOT_ISSUED".to_owned())
    );
    // Over the cap: refused before decoding, as every counted field is (see caps.rs).
    let too_many: Vec<i64> = (1..=1001).collect();
    let refused = delete(&mut client, "run-1", &too_many, None).await;
    assert_eq!(
        reason(&refused.unwrap_err()),
        (Code::ResourceExhausted, "TOO_LARGE".to_owned())
    );
    let negative = delete(&mut client, "run-1", &[1, -1], None).await;
    let negative = negative.unwrap_err();
    assert_eq!(negative.code(), Code::InvalidArgument);
    assert_eq!(
        negative.get_details_error_info().unwrap().metadata["field"],
        "steps"
    );
    let unknown = delete(&mut client, "no-such-run", &[1], None).await;
    assert_eq!(
        reason(&unknown.unwrap_err()),
        (Code::NotFound, "RUN_NOT_FOUND".to_owned())
    );
    assert_eq!(head(&mut client, "run-1").await.checkpoint_count, 2);

    // The owner's epoch, and the cap itself, pass.
    let at_cap: Vec<i64> = (1..=1000).collect();
    let answer = delete(&mut client, "run-1", &at_cap, Some(epoch))
        .await
        .unwrap();
    assert_eq!(answer.deleted_checkpoints, 2);
}

#[tokio::test]
async fn the_cache_never_serves_a_deleted_checkpoint() {
    let schema = PgSchema::create().await;
    let prefix = unique_prefix();
    let settings = CacheSettings {
        prefix: prefix.clone(),
        ..CacheSettings::new(redis_url())
    };
    let (app, cache) = serve_cached(&schema.url(), settings).await;
    let mut client = app.client().await;
    save_steps(&mut client, "run-1", 3).await;
    assert_eq!(latest_step(&mut client, "run-1").await, 3);
    cache.flushed().await;
    assert_eq!(cached_step(&redis_url(), &prefix, "run-1").await, Some(3));

    delete(&mut client, "run-1", &[3], None).await.unwrap();
    // Whether or not the eviction has reached Redis yet, the answer is the store's.
    assert_eq!(latest_step(&mut client, "run-1").await, 2);
    cache.flushed().await;
    assert_ne!(cached_step(&redis_url(), &prefix, "run-1").await, Some(3));
    assert_eq!(latest_step(&mut client, "run-1").await, 2);
}
