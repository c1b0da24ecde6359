//! What a client author needs besides Save and Resume: run heads and the run listing, loads
//! from a message offset, by label and with a journal scope, listings filtered and in either
//! direction, and a Resume that refuses an unknown run.

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    GetRunRequest, JournalScope, ListCheckpointsRequest, ListRunsRequest, LoadAtStepRequest,
    LoadLatestRequest, ResumeRequest, SaveRequest,
};
use tonic::Code;
use tonic::transport::Channel;

use crate::support::requests::{message, save, tool};
use crate::support::{Backend, for_tenant, spawn_app};

type Client = CheckpointServiceClient<Channel>;

/// Saves steps 1..=n, each appending two messages and carrying `{"parity": even|odd}`.
async fn save_steps(client: &mut Client, run_id: &str, n: i64) {
    for step in 1..=n {
        client
            .save(SaveRequest {
                messages: vec![
                    message("user", &format!("q{step}")),
                    message("assistant", &format!("a{step}")),
                ],
                message_offset: (step as u64 - 1) * 2,
                metadata: [(
                    "parity".to_owned(),
                    if step % 2 == 0 { "even" } else { "odd" }.to_owned(),
                )]
                .into(),
                label: format!("ckpt-{step}"),
                ..save(run_id, step, format!("state {step}").as_bytes())
            })
            .await
            .unwrap();
    }
}

fn contents(messages: &[checkpointd::proto::Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| String::from_utf8(m.content.clone()).unwrap())
        .collect()
}

async fn get_run_reads_the_head_without_fencing(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    save_steps(&mut client, "r", 3).await;
    client
        .record_tool_result(tool("r", "c1", 3, "out"))
        .await
        .unwrap();
    let head = client
        .get_run(GetRunRequest { run_id: "r".into() })
        .await
        .unwrap()
        .into_inner()
        .run
        .unwrap();
    assert_eq!(head.run_id, "r");
    assert_eq!((head.epoch, head.message_count, head.tool_count), (0, 6, 1));
    assert_eq!(
        (head.latest_step, head.latest_valid_step),
        (Some(3), Some(3))
    );
    assert_eq!(head.checkpoint_count, 3);
    assert!(head.updated_at.is_some());
    // Reading the head fenced nobody: a writer at epoch 0 still saves.
    client
        .save(SaveRequest {
            message_offset: 6,
            ..save("r", 4, b"four")
        })
        .await
        .unwrap();
    // Another tenant has no such run.
    let other = client
        .get_run(for_tenant("other", GetRunRequest { run_id: "r".into() }))
        .await
        .unwrap_err();
    assert_eq!(other.code(), Code::NotFound);
}

async fn list_runs_pages_by_id_and_filters_by_prefix(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for run_id in ["job-2", "job-1", "job%", "jobs", "other", "job-10"] {
        client.save(save(run_id, 1, b"x")).await.unwrap();
    }
    client
        .save(for_tenant("elsewhere", save("job-3", 1, b"x")))
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .list_runs(ListRunsRequest {
                page_size: 2,
                page_token,
                run_id_prefix: "job-".into(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(page.runs.len() <= 2);
        seen.extend(page.runs.into_iter().map(|run| run.run_id));
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    assert_eq!(seen, ["job-1", "job-10", "job-2"]);
    let all = client
        .list_runs(ListRunsRequest::default())
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<_> = all.runs.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["job%", "job-1", "job-10", "job-2", "jobs", "other"]);
    assert!(all.runs.iter().all(|run| run.latest_step == Some(1)));
    let bad_token = client
        .list_runs(ListRunsRequest {
            page_token: "\u{1}".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad_token.code(), Code::InvalidArgument);
}

async fn loads_start_at_the_message_offset_asked_for(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    save_steps(&mut client, "r", 3).await;
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "r".into(),
            message_offset: 4,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(latest.messages_offset, 4);
    assert_eq!(latest.message_count, 6);
    assert_eq!(contents(&latest.messages), ["q3", "a3"]);
    // Past the checkpoint's log: clamped, so no messages and the offset says where.
    let at = client
        .load_at_step(LoadAtStepRequest {
            run_id: "r".into(),
            step: 1,
            message_offset: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!((at.messages_offset, at.messages.len()), (2, 0));
    let resumed = client
        .resume(ResumeRequest {
            run_id: "r".into(),
            message_offset: 5,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(resumed.messages_offset, 5);
    assert_eq!(contents(&resumed.messages), ["a3"]);
    // The rewind kept the whole log: the next save continues at 6.
    client
        .save(SaveRequest {
            epoch: Some(1),
            message_offset: 6,
            ..save("r", 4, b"four")
        })
        .await
        .unwrap();
}

async fn a_checkpoint_loads_by_its_label(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    save_steps(&mut client, "r", 3).await;
    let loaded = client
        .load_at_step(LoadAtStepRequest {
            run_id: "r".into(),
            label: "ckpt-2".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!((loaded.step, loaded.label.as_str()), (2, "ckpt-2"));
    assert_eq!(loaded.state, b"state 2");
    let missing = client
        .load_at_step(LoadAtStepRequest {
            run_id: "r".into(),
            label: "ckpt-9".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "r".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(latest.label, "ckpt-3");
    // An identical retry keeps working, label and all.
    let retry = client
        .save(SaveRequest {
            messages: vec![message("user", "q1"), message("assistant", "a1")],
            metadata: [("parity".to_owned(), "odd".to_owned())].into(),
            label: "ckpt-1".into(),
            ..save("r", 1, b"state 1")
        })
        .await
        .unwrap()
        .into_inner();
    assert!(retry.already_existed);
}

async fn the_journal_scope_picks_the_entries_returned(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    client
        .record_tool_result(tool("r", "s1", 1, "one"))
        .await
        .unwrap();
    client.save(save("r", 1, b"x")).await.unwrap();
    client
        .record_tool_result(tool("r", "s1-late", 1, "late"))
        .await
        .unwrap();
    client
        .record_tool_result(tool("r", "s2", 2, "two"))
        .await
        .unwrap();
    let calls = |scope: JournalScope, mut client: Client| async move {
        let loaded = client
            .load_latest(LoadLatestRequest {
                run_id: "r".into(),
                journal: scope as i32,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let ids: Vec<String> = loaded.tool_results.into_iter().map(|t| t.call_id).collect();
        ids
    };
    assert_eq!(
        calls(JournalScope::Unspecified, client.clone()).await,
        ["s1", "s1-late", "s2"]
    );
    assert_eq!(
        calls(JournalScope::All, client.clone()).await,
        ["s1", "s1-late", "s2"]
    );
    assert_eq!(
        calls(JournalScope::Step, client.clone()).await,
        ["s1", "s1-late"]
    );
    assert!(calls(JournalScope::None, client.clone()).await.is_empty());
    let unknown = client
        .load_at_step(LoadAtStepRequest {
            run_id: "r".into(),
            step: 1,
            journal: 42,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::InvalidArgument);
}

async fn list_checkpoints_filters_by_metadata_either_way(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    save_steps(&mut client, "r", 7).await;
    let list = |request: ListCheckpointsRequest, mut client: Client| async move {
        let mut steps = Vec::new();
        let mut request = request;
        loop {
            let page = client
                .list_checkpoints(request.clone())
                .await
                .unwrap()
                .into_inner();
            assert!(page.checkpoints.len() <= request.page_size as usize);
            for summary in &page.checkpoints {
                assert_eq!(summary.label, format!("ckpt-{}", summary.step));
            }
            steps.extend(page.checkpoints.iter().map(|c| c.step));
            if page.next_page_token.is_empty() {
                return steps;
            }
            request.page_token = page.next_page_token;
        }
    };
    let even: std::collections::HashMap<String, String> =
        [("parity".to_owned(), "even".to_owned())].into();
    let request = |descending, before_step| ListCheckpointsRequest {
        run_id: "r".into(),
        page_size: 2,
        descending,
        before_step,
        metadata_filter: even.clone(),
        ..Default::default()
    };
    assert_eq!(list(request(false, None), client.clone()).await, [2, 4, 6]);
    assert_eq!(list(request(true, None), client.clone()).await, [6, 4, 2]);
    assert_eq!(list(request(true, Some(6)), client.clone()).await, [4, 2]);
    let everything = ListCheckpointsRequest {
        run_id: "r".into(),
        page_size: 3,
        descending: true,
        ..Default::default()
    };
    assert_eq!(
        list(everything, client.clone()).await,
        [7, 6, 5, 4, 3, 2, 1]
    );
    let page = client
        .list_checkpoints(ListCheckpointsRequest {
            run_id: "r".into(),
            page_size: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        page.checkpoints[0]
            .metadata
            .get("parity")
            .map(String::as_str),
        Some("odd")
    );
}

async fn a_strict_resume_refuses_a_run_never_seen(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    let strict = |run_id: &str| ResumeRequest {
        run_id: run_id.into(),
        require_existing: true,
        ..Default::default()
    };
    let error = client.resume(strict("mistyped")).await.unwrap_err();
    assert_eq!(error.code(), Code::NotFound);
    // Nothing was created on the way.
    let head = client
        .get_run(GetRunRequest {
            run_id: "mistyped".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(head.code(), Code::NotFound);
    client.save(save("known", 1, b"x")).await.unwrap();
    let resumed = client.resume(strict("known")).await.unwrap().into_inner();
    assert_eq!((resumed.recovered_from_step, resumed.epoch), (1, 1));
}

crate::for_each_backend!(
    get_run_reads_the_head_without_fencing,
    list_runs_pages_by_id_and_filters_by_prefix,
    loads_start_at_the_message_offset_asked_for,
    a_checkpoint_loads_by_its_label,
    the_journal_scope_picks_the_entries_returned,
    list_checkpoints_filters_by_metadata_either_way,
    a_strict_resume_refuses_a_run_never_seen,
);
