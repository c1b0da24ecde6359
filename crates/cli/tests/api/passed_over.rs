//! Corruption stays visible until it is repaired: every LoadLatest and Resume, from any client,
//! lists the quarantined checkpoints it passed over (`passed_over`), until an operator drops
//! them (`checkpointd runs drop-quarantined`) or a newer valid checkpoint is saved above them.

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    LoadLatestRequest, LoadLatestResponse, PassedOverCheckpoint, ResumeRequest, SaveRequest,
};
use tonic::transport::Channel;

use crate::support::requests::save;
use crate::support::{Backend, cli, spawn_app, stdout_of};

async fn load_latest(client: &mut CheckpointServiceClient<Channel>) -> LoadLatestResponse {
    client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
}

/// `checkpointd runs drop-quarantined run-1 ARGS` against the app's address; its stdout. On the
/// blocking pool, so the app on this test's runtime keeps serving while the process waits.
async fn drop_quarantined(addr: std::net::SocketAddr, args: &[&str]) -> String {
    let mut argv = vec![
        "runs".to_owned(),
        "drop-quarantined".to_owned(),
        "run-1".to_owned(),
    ];
    argv.extend(args.iter().map(|arg| (*arg).to_owned()));
    tokio::task::spawn_blocking(move || {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        stdout_of(&cli(addr, &argv))
    })
    .await
    .unwrap()
}

/// Steps and checkpoint ids, after checking what every entry must carry.
fn passed(passed_over: &[PassedOverCheckpoint]) -> Vec<(i64, String)> {
    passed_over
        .iter()
        .map(|checkpoint| {
            assert!(checkpoint.quarantined_at.is_some(), "{checkpoint:?}");
            assert!(
                checkpoint.reason.contains("checksum mismatch"),
                "{checkpoint:?}"
            );
            (checkpoint.step, checkpoint.checkpoint_id.clone())
        })
        .collect()
}

async fn every_reader_sees_what_was_passed_over_until_the_operator_drops_it(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let mut ids = Vec::new();
    for step in 1..=4 {
        let saved = client
            .save(save(
                "run-1",
                step,
                format!("{{\"step\":{step}}}").as_bytes(),
            ))
            .await
            .unwrap()
            .into_inner();
        ids.push((step, saved.checkpoint_id));
    }
    app.corrupt_state("run-1", 4).await;
    app.corrupt_state("run-1", 3).await;
    let expected = vec![ids[3].clone(), ids[2].clone()];

    let first = load_latest(&mut client).await;
    assert_eq!(first.checkpoint.unwrap().step, 2);
    assert_eq!(first.skipped_steps, vec![4, 3]);
    assert_eq!(passed(&first.passed_over), expected);
    // Another client, on its own connection: nothing is newly corrupt, so `skipped_steps`
    // keeps its older meaning and stays empty, but `passed_over` still names both.
    let mut other = app.client().await;
    for reader in [&mut other, &mut client] {
        let again = load_latest(reader).await;
        assert_eq!(again.checkpoint.unwrap().step, 2);
        assert!(again.skipped_steps.is_empty());
        assert_eq!(again.passed_over, first.passed_over);
    }
    let resumed = other
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 2);
    assert_eq!(resumed.skipped_steps, vec![4, 3]);
    assert_eq!(resumed.passed_over, first.passed_over);

    let dropped = drop_quarantined(app.addr, &[]).await;
    assert_eq!(
        dropped.trim(),
        "dropped 2 quarantined checkpoints (steps 4, 3)"
    );
    for reader in [&mut other, &mut client] {
        let quiet = load_latest(reader).await;
        assert_eq!(quiet.checkpoint.unwrap().step, 2);
        assert!(quiet.passed_over.is_empty() && quiet.skipped_steps.is_empty());
    }
    let again = drop_quarantined(app.addr, &[]).await;
    assert_eq!(again.trim(), "no quarantined checkpoints");
    let json = drop_quarantined(app.addr, &["--json"]).await;
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["dropped"], 0, "{json}");
    assert_eq!(json["dropped_steps"], serde_json::json!([]), "{json}");

    // Corrupt again, then save a newer valid checkpoint above: quiet without any repair.
    app.corrupt_state("run-1", 2).await;
    let fallback = load_latest(&mut client).await;
    assert_eq!(fallback.checkpoint.unwrap().step, 1);
    assert_eq!(passed(&fallback.passed_over), vec![ids[1].clone()]);
    client
        .save(SaveRequest {
            epoch: Some(resumed.epoch),
            ..save("run-1", 5, b"{\"step\":5}")
        })
        .await
        .unwrap();
    for reader in [&mut other, &mut client] {
        let quiet = load_latest(reader).await;
        assert_eq!(quiet.checkpoint.unwrap().step, 5);
        assert!(quiet.passed_over.is_empty() && quiet.skipped_steps.is_empty());
    }
    // The quarantined step below stays for the operator, who may still drop it.
    let json = drop_quarantined(app.addr, &["--json"]).await;
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["dropped"], 1, "{json}");
    assert_eq!(json["dropped_steps"], serde_json::json!([2]), "{json}");
}

crate::for_each_durable_backend!(
    every_reader_sees_what_was_passed_over_until_the_operator_drops_it,
);
