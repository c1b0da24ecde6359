//! Save, load latest, load at step and list, on every backend.

use checkpointd::proto::{
    DeleteRunRequest, ListCheckpointsRequest, LoadAtStepRequest, LoadLatestRequest,
};
use tonic::Code;

use crate::support::requests::{message, save};
use crate::support::{Backend, for_tenant, spawn_app};

async fn save_load_and_list_roundtrip(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for step in 1..=3 {
        let mut request = save("run-1", step, format!("{{\"step\":{step}}}").as_bytes());
        request.messages = vec![message("assistant", &format!("reply {step}"))];
        request.message_offset = step as u64 - 1;
        request.metadata = [("agent".to_owned(), "demo".to_owned())].into();
        let saved = client.save(request).await.unwrap().into_inner();
        assert_eq!(saved.checksum.len(), 64);
        assert!(!saved.already_existed);
    }

    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let checkpoint = latest.checkpoint.unwrap();
    assert_eq!(checkpoint.step, 3);
    assert_eq!(checkpoint.state, b"{\"step\":3}");
    assert_eq!(checkpoint.message_count, 3);
    let contents: Vec<_> = checkpoint
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(
        contents,
        vec![
            b"reply 1".to_vec(),
            b"reply 2".to_vec(),
            b"reply 3".to_vec()
        ]
    );
    assert_eq!(
        checkpoint.metadata.get("agent").map(String::as_str),
        Some("demo")
    );
    assert!(latest.skipped_steps.is_empty());

    let at_two = client
        .load_at_step(LoadAtStepRequest {
            run_id: "run-1".into(),
            step: 2,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(at_two.state, b"{\"step\":2}");
    assert_eq!(at_two.messages.len(), 2);

    let first_page = client
        .list_checkpoints(ListCheckpointsRequest {
            run_id: "run-1".into(),
            page_size: 2,
            page_token: String::new(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let steps: Vec<_> = first_page.checkpoints.iter().map(|c| c.step).collect();
    assert_eq!(steps, vec![1, 2]);
    assert!(
        first_page
            .checkpoints
            .iter()
            .all(|c| c.valid && c.size_bytes == 10)
    );
    let second_page = client
        .list_checkpoints(ListCheckpointsRequest {
            run_id: "run-1".into(),
            page_size: 2,
            page_token: first_page.next_page_token,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(second_page.checkpoints.len(), 1);
    assert_eq!(second_page.checkpoints[0].step, 3);
    assert!(second_page.next_page_token.is_empty());
}

async fn identical_retry_succeeds_and_different_content_conflicts(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let mut request = save("run-1", 1, b"a");
    request.messages = vec![message("user", "hi")];
    let first = client.save(request.clone()).await.unwrap().into_inner();
    let retry = client.save(request.clone()).await.unwrap().into_inner();
    assert!(retry.already_existed);
    assert_eq!(retry.checkpoint_id, first.checkpoint_id);
    assert_eq!(retry.checksum, first.checksum);

    request.state = b"b".to_vec();
    let conflict = client.save(request).await.unwrap_err();
    assert_eq!(conflict.code(), Code::AlreadyExists, "{conflict:?}");
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
    assert_eq!(latest.state, b"a");
    assert_eq!(latest.message_count, 1);
}

async fn tenants_never_see_each_others_runs(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client
        .save(for_tenant("acme", save("shared-id", 1, b"acme state")))
        .await
        .unwrap();
    client
        .save(for_tenant("globex", save("shared-id", 1, b"globex state")))
        .await
        .unwrap();
    let reader = client.clone();
    let load = |tenant: &'static str| {
        let mut client = reader.clone();
        async move {
            client
                .load_latest(for_tenant(
                    tenant,
                    LoadLatestRequest {
                        run_id: "shared-id".into(),
                        ..Default::default()
                    },
                ))
                .await
        }
    };
    assert_eq!(
        load("acme")
            .await
            .unwrap()
            .into_inner()
            .checkpoint
            .unwrap()
            .state,
        b"acme state"
    );
    assert_eq!(
        load("globex")
            .await
            .unwrap()
            .into_inner()
            .checkpoint
            .unwrap()
            .state,
        b"globex state"
    );
    // Without the header the tenant is `default`, which has no such run.
    assert_eq!(load("default").await.unwrap_err().code(), Code::NotFound);

    client
        .delete_run(for_tenant(
            "acme",
            DeleteRunRequest {
                run_id: "shared-id".into(),
            },
        ))
        .await
        .unwrap();
    assert_eq!(load("acme").await.unwrap_err().code(), Code::NotFound);
    assert!(load("globex").await.is_ok());
}

async fn client_computed_checksum_is_accepted_when_it_matches(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let mut request = save("run-1", 1, b"{}");
    let expected = client
        .save(request.clone())
        .await
        .unwrap()
        .into_inner()
        .checksum;
    request.run_id = "run-2".into();
    request.checksum = Some(expected.clone());
    // Same content under another run id hashes differently: the run id is covered.
    let error = client.save(request.clone()).await.unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    request.run_id = "run-1".into();
    request.step = 1;
    let retry = client.save(request).await.unwrap().into_inner();
    assert_eq!(retry.checksum, expected);
}

crate::for_each_backend!(
    save_load_and_list_roundtrip,
    identical_retry_succeeds_and_different_content_conflicts,
    tenants_never_see_each_others_runs,
    client_computed_checksum_is_accepted_when_it_matches,
);
