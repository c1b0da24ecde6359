//! Corruption: bytes flipped directly in SQLite and Postgres are caught before anything is restored.

use checkpointd::proto::{
    ListCheckpointsRequest, LoadAtStepRequest, LoadLatestRequest, ResumeRequest, SaveRequest,
};
use tonic::Code;

use crate::messages::contents;
use crate::support::requests::{message, save};
use crate::support::validate_run;
use crate::support::{Backend, spawn_app};

async fn a_corrupt_checkpoint_is_reported_quarantined_and_skipped(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for step in [3, 6] {
        client
            .save(save(
                "run-1",
                step,
                format!("{{\"step\":{step}}}").as_bytes(),
            ))
            .await
            .unwrap();
    }
    app.corrupt_state("run-1", 6).await;

    let verdicts = validate_run(&mut client, "run-1").await;
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts[0].valid && !verdicts[0].quarantined);
    assert_eq!(verdicts[1].step, 6);
    assert!(!verdicts[1].valid && verdicts[1].quarantined);
    assert!(
        verdicts[1].reason.contains("checksum mismatch"),
        "{}",
        verdicts[1].reason
    );

    let at_six = client
        .load_at_step(LoadAtStepRequest {
            run_id: "run-1".into(),
            step: 6,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(at_six.code(), Code::DataLoss);
    let listed = client
        .list_checkpoints(ListCheckpointsRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoints;
    assert!(listed[0].valid && !listed[1].valid);

    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 3);
    assert_eq!(resumed.skipped_steps, vec![6]);
    assert_eq!(resumed.checkpoint.unwrap().state, b"{\"step\":3}");
}

async fn resume_skips_corruption_it_finds_itself(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for step in [1, 2, 3] {
        client.save(save("run-1", step, b"{}")).await.unwrap();
    }
    app.corrupt_state("run-1", 3).await;
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(latest.checkpoint.unwrap().step, 2);
    assert_eq!(latest.skipped_steps, vec![3]);
}

async fn when_every_checkpoint_is_corrupt_the_run_restarts_from_scratch(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for step in [1, 2] {
        client
            .save(save("run-1", step, b"{\"x\":1}"))
            .await
            .unwrap();
    }
    app.corrupt_state("run-1", 1).await;
    app.corrupt_state("run-1", 2).await;
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(resumed.restarted_from_scratch);
    assert!(resumed.checkpoint.is_none());
    assert_eq!(resumed.recovered_from_step, 0);
    assert_eq!(resumed.skipped_steps, vec![2, 1]);
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(latest.code(), Code::DataLoss);
}

async fn a_corrupt_message_invalidates_the_checkpoints_that_cover_it(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client
        .save(SaveRequest {
            messages: vec![message("user", "first")],
            ..save("run-1", 1, b"{}")
        })
        .await
        .unwrap();
    client
        .save(SaveRequest {
            messages: vec![message("user", "second")],
            message_offset: 1,
            ..save("run-1", 2, b"{}")
        })
        .await
        .unwrap();
    let literal = match backend {
        Backend::Sqlite => "X'78'",
        _ => "'\\x78'::bytea",
    };
    app.raw_sql(&format!(
        "UPDATE messages SET content = {literal} WHERE run_id = 'run-1' AND seq = 1"
    ))
    .await;
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 1);
    assert_eq!(resumed.skipped_steps, vec![2]);
    assert_eq!(contents(resumed.checkpoint.as_ref().unwrap()), ["first"]);
}

async fn a_rewind_truncates_the_log_and_appends_continue_from_there(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for (step, text) in [(3, "three"), (4, "four"), (5, "five")] {
        client
            .save(SaveRequest {
                messages: vec![message("assistant", text)],
                message_offset: (step - 3) as u64,
                ..save("run-1", step, b"{}")
            })
            .await
            .unwrap();
    }
    app.corrupt_state("run-1", 5).await;
    app.corrupt_state("run-1", 4).await;

    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 3);
    assert_eq!(resumed.skipped_steps, vec![5, 4]);
    assert_eq!(contents(resumed.checkpoint.as_ref().unwrap()), ["three"]);

    // The log is now one message long: the old offset is refused, offset 1 continues it.
    let stale = client
        .save(SaveRequest {
            messages: vec![message("assistant", "six")],
            message_offset: 3,
            epoch: Some(resumed.epoch),
            ..save("run-1", 6, b"{}")
        })
        .await
        .unwrap_err();
    // Past the log's end, so the client is told to resync (reason MESSAGE_LOG_BEHIND).
    assert_eq!(stale.code(), Code::FailedPrecondition, "{stale:?}");
    client
        .save(SaveRequest {
            messages: vec![message("assistant", "four again")],
            message_offset: 1,
            epoch: Some(resumed.epoch),
            ..save("run-1", 4, b"{\"retry\":true}")
        })
        .await
        .unwrap();
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(latest.step, 4);
    assert_eq!(contents(&latest), ["three", "four again"]);
}

async fn resaving_a_quarantined_step_with_identical_content_replaces_it(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let second = SaveRequest {
        messages: vec![message("assistant", "two")],
        message_offset: 1,
        ..save("run-1", 2, b"{\"step\":2}")
    };
    client
        .save(SaveRequest {
            messages: vec![message("assistant", "one")],
            ..save("run-1", 1, b"{}")
        })
        .await
        .unwrap();
    client.save(second.clone()).await.unwrap();
    app.corrupt_state("run-1", 2).await;
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 1);

    // The agent redoes step 2 deterministically: same content, new epoch.
    let redone = client
        .save(SaveRequest {
            epoch: Some(resumed.epoch),
            ..second
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        !redone.already_existed,
        "the corrupt copy must be rewritten"
    );
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(latest.step, 2);
    assert_eq!(contents(&latest), ["one", "two"]);
}

crate::for_each_durable_backend!(
    resaving_a_quarantined_step_with_identical_content_replaces_it,
    a_corrupt_checkpoint_is_reported_quarantined_and_skipped,
    resume_skips_corruption_it_finds_itself,
    when_every_checkpoint_is_corrupt_the_run_restarts_from_scratch,
    a_corrupt_message_invalidates_the_checkpoints_that_cover_it,
    a_rewind_truncates_the_log_and_appends_continue_from_there,
);
