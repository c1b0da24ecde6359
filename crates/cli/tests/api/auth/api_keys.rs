//! API keys: refused when missing, wrong or revoked (without a restart, within the revocation
//! bound); bound to one tenant;
//! roles enforced; approvals record the key. The CLI's keys work on the same database.

use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ApproveRequest, DeleteRunRequest, GetRequest, ListCheckpointsRequest, LoadLatestRequest,
};
use std::time::{Duration, Instant};

use checkpointd_core::domain::Role;
use tonic::Code;

use super::{
    api_key_auth, assert_unauthenticated, bearer, latest_step, make_key, save_as, spawn_with_auth,
    task_awaiting_approval,
};
use crate::for_each_backend;
use crate::support::{Backend, ServerProcess, channel, stdout_of};

for_each_backend!(
    a_missing_malformed_or_unknown_key_is_unauthenticated_with_one_message,
    a_key_naming_another_tenant_is_denied_and_that_tenant_is_untouched,
    an_agent_may_not_approve_and_an_operators_approval_records_its_key,
);

async fn a_missing_malformed_or_unknown_key_is_unauthenticated_with_one_message(backend: Backend) {
    let app = spawn_with_auth(backend, api_key_auth()).await;
    let (_, good) = make_key(&app, Some("acme"), Role::Agent).await;
    save_as(&app, &good, None, "run-1", 1).await.unwrap();
    assert_eq!(latest_step(&app, Some(&good), "run-1").await.unwrap(), 1);

    // Same id, another secret: only the hash comparison can refuse it.
    let (id_part, secret) = good.rsplit_once('_').unwrap();
    let flipped = if secret.starts_with('0') { "1" } else { "0" };
    let wrong_secret = format!("{id_part}_{flipped}{}", &secret[1..]);
    let unknown_id = format!("ckpt_0000000000000000_{secret}");
    for token in [
        None,
        Some(""),
        Some("not-a-key"),
        Some(wrong_secret.as_str()),
        Some(unknown_id.as_str()),
    ] {
        let status = latest_step(&app, token, "run-1").await.unwrap_err();
        assert_unauthenticated(&status);
    }
    // Another scheme than Bearer is no credential either.
    let mut client = app.client().await;
    let mut request = tonic::Request::new(LoadLatestRequest {
        run_id: "run-1".into(),
        ..Default::default()
    });
    request
        .metadata_mut()
        .insert("authorization", format!("Basic {good}").parse().unwrap());
    assert_unauthenticated(&client.load_latest(request).await.unwrap_err());
}

async fn a_key_naming_another_tenant_is_denied_and_that_tenant_is_untouched(backend: Backend) {
    let app = spawn_with_auth(backend, api_key_auth()).await;
    let (_, agent_a) = make_key(&app, Some("tenant-a"), Role::Agent).await;
    let (_, operator_a) = make_key(&app, Some("tenant-a"), Role::Operator).await;
    let (_, admin) = make_key(&app, None, Role::Admin).await;
    save_as(&app, &admin, Some("tenant-b"), "shared-run", 3)
        .await
        .unwrap();

    let denied = |result: Result<(), tonic::Status>| {
        let status = result.unwrap_err();
        assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    };
    // Write, read, list and delete in B with A's credentials: all refused.
    denied(save_as(&app, &agent_a, Some("tenant-b"), "shared-run", 4).await);
    let mut client = app.client().await;
    let load = LoadLatestRequest {
        run_id: "shared-run".into(),
        ..Default::default()
    };
    denied(
        client
            .load_latest(bearer(Some(&agent_a), Some("tenant-b"), load.clone()))
            .await
            .map(drop),
    );
    let list = ListCheckpointsRequest {
        run_id: "shared-run".into(),
        ..ListCheckpointsRequest::default()
    };
    denied(
        client
            .list_checkpoints(bearer(Some(&agent_a), Some("tenant-b"), list))
            .await
            .map(drop),
    );
    let delete = DeleteRunRequest {
        run_id: "shared-run".into(),
    };
    denied(
        client
            .delete_run(bearer(Some(&operator_a), Some("tenant-b"), delete.clone()))
            .await
            .map(drop),
    );

    // A's credentials without the header act in A, where the run does not exist; naming A
    // explicitly is the same.
    let status = client
        .load_latest(bearer(Some(&agent_a), None, load.clone()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status = client
        .delete_run(bearer(Some(&operator_a), Some("tenant-a"), delete))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    // B is as it was: one checkpoint, at step 3.
    let b = client
        .load_latest(bearer(Some(&admin), Some("tenant-b"), load))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(b.checkpoint.unwrap().step, 3);
    let steps = client
        .list_checkpoints(bearer(
            Some(&admin),
            Some("tenant-b"),
            ListCheckpointsRequest {
                run_id: "shared-run".into(),
                ..ListCheckpointsRequest::default()
            },
        ))
        .await
        .unwrap()
        .into_inner()
        .checkpoints
        .len();
    assert_eq!(steps, 1);
}

async fn an_agent_may_not_approve_and_an_operators_approval_records_its_key(backend: Backend) {
    let app = spawn_with_auth(backend, api_key_auth()).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (operator_id, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let parked = task_awaiting_approval(&app, &agent, "deploy-run").await;
    let mut tasks: TaskServiceClient<_> = app.tasks().await;
    let approve = ApproveRequest {
        task_id: parked.task_id.clone(),
        decided_by: "the-ceo".into(),
        comment: "ship it".into(),
    };
    let status = tasks
        .approve(bearer(Some(&agent), None, approve.clone()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let still = tasks
        .get(bearer(
            Some(&agent),
            None,
            GetRequest {
                task_id: parked.task_id.clone(),
            },
        ))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert!(
        !still.approval.unwrap().decided,
        "the refused call decided nothing"
    );

    let approved = tasks
        .approve(bearer(Some(&operator), None, approve))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
        .approval
        .unwrap();
    assert!(approved.decided && approved.approved);
    assert_eq!(approved.decided_by, format!("key:{operator_id}"));
    assert_eq!(approved.comment, "[decided_by note: the-ceo] ship it");
}

/// The real `checkpointd keys` on the real server's database: a created key works, `list`
/// never shows a secret, and a revoked key is refused within `bound` with no restart, the
/// server caching keys for `ttl`.
async fn keys_made_by_the_cli_work_until_revoked(url: &str, ttl: &str, bound: Duration) {
    let keys = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
            .arg("keys")
            .args(args)
            .args(["--database", url])
            .env_remove("CHECKPOINTD_DATABASE")
            .output()
            .expect("run checkpointd keys")
    };
    let created = stdout_of(&keys(&["create", "--tenant", "acme", "--role", "agent"]));
    let token = created.trim().to_owned();
    assert!(token.starts_with("ckpt_"), "{created}");
    let refused = keys(&["create", "--tenant", "*", "--role", "agent"]);
    assert!(!refused.status.success(), "an agent key for all tenants");

    let server = ServerProcess::start(url, &["--auth", "api-key", "--api-key-cache-ttl", ttl]);
    let mut client = checkpointd::proto::checkpoint_service_client::CheckpointServiceClient::new(
        channel(server.addr).await,
    );
    let save = crate::support::requests::save("cli-run", 1, b"{}");
    client
        .save(bearer(Some(&token), None, save.clone()))
        .await
        .unwrap();

    let listed = stdout_of(&keys(&["list"]));
    let (id, secret) = token
        .strip_prefix("ckpt_")
        .unwrap()
        .split_once('_')
        .unwrap();
    assert!(listed.contains(id) && listed.contains("active"), "{listed}");
    assert!(!listed.contains(secret), "list printed a secret: {listed}");

    stdout_of(&keys(&["revoke", id]));
    let revoked = Instant::now();
    let status = loop {
        match client.save(bearer(Some(&token), None, save.clone())).await {
            Err(status) => break status,
            Ok(_) => assert!(
                revoked.elapsed() < bound,
                "the revoked key still works {:?} after its revocation",
                revoked.elapsed()
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_unauthenticated(&status);
    assert!(stdout_of(&keys(&["list"])).contains("revoked"));
}

#[tokio::test]
async fn keys_made_by_the_cli_work_until_revoked_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("keys.db").display());
    // Another process's revocation reaches a SQLite server when its cached read expires.
    keys_made_by_the_cli_work_until_revoked(&url, "1s", Duration::from_secs(2)).await;
}

#[tokio::test]
async fn keys_made_by_the_cli_work_until_revoked_on_postgres() {
    let schema = crate::support::PgSchema::create().await;
    // The notification, long before the TTL.
    keys_made_by_the_cli_work_until_revoked(&schema.url(), "10m", Duration::from_secs(3)).await;
}
