//! A history larger than one answer comes back a page at a time to a client that follows
//! continuations, whole and verified; an older client gets ANSWER_TOO_LARGE instead of a
//! history cut short; a page that fails its chain link is DATA_LOSS, and a checkpoint that
//! changed between pages is CHECKPOINT_CHANGED.

use checkpointd::config::{AnswerLimits, ServerSettings};
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    ClientCapability, DeleteCheckpointsRequest, LoadAtStepRequest, LoadLatestRequest, Message,
    ResumeRequest, SaveRequest,
};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::requests::save;
use crate::support::{Backend, TestApp, spawn_app_with};

/// Messages of 100 bytes: a page of 1000 bytes holds ten.
const MESSAGES: usize = 45;
const PAGED: i32 = ClientCapability::PagedMessages as i32;

async fn paged_app(backend: Backend) -> (TestApp, CheckpointServiceClient<Channel>) {
    let settings = ServerSettings {
        answers: AnswerLimits {
            page_bytes: 1000,
            max_unpaged_bytes: 3000,
            ..AnswerLimits::default()
        },
        ..ServerSettings::default()
    };
    let app = spawn_app_with(backend, settings).await;
    let client = app.client().await;
    (app, client)
}

fn history() -> Vec<Message> {
    (0..MESSAGES)
        .map(|i| Message {
            role: "user".into(),
            content: format!("{i:03}").repeat(34).into_bytes()[..100].to_vec(),
        })
        .collect()
}

/// Saves the history over three steps (1, 2, 3), fifteen messages each.
async fn save_history(client: &mut CheckpointServiceClient<Channel>, run: &str) {
    for (index, chunk) in history().chunks(15).enumerate() {
        client
            .save(SaveRequest {
                messages: chunk.to_vec(),
                message_offset: (index * 15) as u64,
                ..save(run, index as i64 + 1, b"{\"state\":1}")
            })
            .await
            .unwrap();
    }
}

fn reason(status: &Status) -> (Code, String) {
    let info = status.get_details_error_info().expect("an ErrorInfo");
    (status.code(), info.reason)
}

/// Follows `continuation` to the end, returning the pages' messages.
async fn follow(
    client: &mut CheckpointServiceClient<Channel>,
    run: &str,
    mut continuation: Vec<u8>,
    start: usize,
) -> Result<(Vec<Message>, usize), Status> {
    let mut messages = Vec::new();
    let mut pages = 0;
    while !continuation.is_empty() {
        let page = client
            .load_at_step(LoadAtStepRequest {
                run_id: run.into(),
                continuation,
                capabilities: vec![PAGED],
                ..Default::default()
            })
            .await?
            .into_inner();
        let checkpoint = page.checkpoint.unwrap();
        assert_eq!(checkpoint.messages_offset as usize, start + messages.len());
        assert!(checkpoint.state.is_empty() && page.tool_results.is_empty());
        messages.extend(checkpoint.messages);
        continuation = page.continuation;
        pages += 1;
    }
    Ok((messages, pages))
}

async fn a_long_history_comes_back_whole_a_page_at_a_time(backend: Backend) {
    let (_app, mut client) = paged_app(backend).await;
    save_history(&mut client, "run-1").await;
    let first = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let checkpoint = first.checkpoint.unwrap();
    assert_eq!(checkpoint.step, 3);
    assert_eq!(checkpoint.state, b"{\"state\":1}");
    assert_eq!(checkpoint.messages.len(), 10, "a page of 1000 bytes");
    let mut messages = checkpoint.messages;
    let (rest, pages) = follow(&mut client, "run-1", first.continuation, 10)
        .await
        .unwrap();
    messages.extend(rest);
    assert_eq!(pages, 4);
    assert_eq!(messages, history());

    // Resume and LoadAtStep page the same way; an offset starts the first page there.
    let resumed = client
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            message_offset: 40,
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(resumed.continuation.is_empty());
    assert_eq!(resumed.checkpoint.unwrap().messages, history()[40..]);
    let at_two = client
        .load_at_step(LoadAtStepRequest {
            run_id: "run-1".into(),
            step: 2,
            message_offset: 5,
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let checkpoint = at_two.checkpoint.unwrap();
    assert_eq!(checkpoint.messages_offset, 5);
    assert_eq!(checkpoint.messages, history()[5..15]);
    assert_eq!(checkpoint.message_count, 30);
    assert!(!at_two.continuation.is_empty());
}

async fn an_older_client_gets_answer_too_large_never_a_cut_history(backend: Backend) {
    let (_app, mut client) = paged_app(backend).await;
    save_history(&mut client, "run-1").await;
    let refused = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        reason(&refused),
        (Code::ResourceExhausted, "ANSWER_TOO_LARGE".into())
    );
    // What fits the unpaged limit still comes back whole, in one answer.
    let tail = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            message_offset: 20,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(tail.continuation.is_empty());
    assert_eq!(tail.checkpoint.unwrap().messages, history()[20..]);
}

async fn a_page_that_fails_its_link_is_data_loss_and_the_step_is_quarantined(backend: Backend) {
    let (app, mut client) = paged_app(backend).await;
    save_history(&mut client, "run-1").await;
    let first = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let literal = match backend {
        Backend::Sqlite => "X'78'",
        _ => "'\\x78'::bytea",
    };
    // Message 25 lies in the third page.
    app.raw_sql(&format!(
        "UPDATE messages SET content = {literal} WHERE run_id = 'run-1' AND seq = 25"
    ))
    .await;
    let refused = follow(&mut client, "run-1", first.continuation, 10)
        .await
        .unwrap_err();
    assert_eq!(
        reason(&refused),
        (Code::DataLoss, "CHECKPOINT_CORRUPT".into())
    );
    // Loading again starts below the quarantined step. Step 2 covers message 25 too, but a
    // load verifies what it returns: its first page (10..20) is sound, its third is not.
    let load = |offset: u64| LoadLatestRequest {
        run_id: "run-1".into(),
        message_offset: offset,
        capabilities: vec![PAGED],
        ..Default::default()
    };
    let again = client.load_latest(load(10)).await.unwrap().into_inner();
    assert_eq!(again.checkpoint.unwrap().step, 2);
    let refused = follow(&mut client, "run-1", again.continuation, 20)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::DataLoss);
    let last = client.load_latest(load(0)).await.unwrap().into_inner();
    let checkpoint = last.checkpoint.unwrap();
    assert_eq!(checkpoint.step, 1);
    let mut messages = checkpoint.messages;
    let (rest, pages) = follow(&mut client, "run-1", last.continuation, 10)
        .await
        .unwrap();
    messages.extend(rest);
    assert_eq!((messages.as_slice(), pages), (&history()[..15], 1));
}

async fn a_checkpoint_changed_between_pages_is_checkpoint_changed(backend: Backend) {
    let (_app, mut client) = paged_app(backend).await;
    save_history(&mut client, "run-1").await;
    let first = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    client
        .delete_checkpoints(DeleteCheckpointsRequest {
            run_id: "run-1".into(),
            steps: vec![3],
            epoch: None,
        })
        .await
        .unwrap();
    let refused = follow(&mut client, "run-1", first.continuation, 10)
        .await
        .unwrap_err();
    assert_eq!(
        reason(&refused),
        (Code::FailedPrecondition, "CHECKPOINT_CHANGED".into())
    );
    let forged = client
        .load_at_step(LoadAtStepRequest {
            run_id: "run-1".into(),
            continuation: b"not a token".to_vec(),
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(forged.code(), Code::InvalidArgument);
}

/// Ten messages of 1 MiB: Validate reads them in windows of 4 MiB and still verifies the whole
/// log against a chain it recomputes, stored digests included.
async fn validate_verifies_a_log_longer_than_its_window_whole(backend: Backend) {
    let (app, mut client) = paged_app(backend).await;
    let big = |i: u8| Message {
        role: "user".into(),
        content: vec![i; 1 << 20],
    };
    client
        .save(SaveRequest {
            messages: (0..10).map(big).collect(),
            ..save("run-1", 1, b"{}")
        })
        .await
        .unwrap();
    let verdicts = crate::support::validate_run(&mut client, "run-1").await;
    assert!(verdicts[0].valid, "{verdicts:?}");
    let literal = match backend {
        Backend::Sqlite => "X'78'",
        _ => "'\\x78'::bytea",
    };
    app.raw_sql(&format!(
        "UPDATE messages SET chain = {literal} WHERE run_id = 'run-1' AND seq = 9"
    ))
    .await;
    let verdicts = crate::support::validate_run(&mut client, "run-1").await;
    assert!(
        !verdicts[0].valid && verdicts[0].quarantined,
        "{verdicts:?}"
    );
    assert!(verdicts[0].reason.contains("chain digest"), "{verdicts:?}");
}

/// The edges of a window: an offset past the log's end, and a message larger than a page.
async fn an_offset_past_the_end_is_empty_and_a_large_message_comes_alone(backend: Backend) {
    let (_app, mut client) = paged_app(backend).await;
    save_history(&mut client, "run-1").await;
    let past = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            message_offset: 1_000,
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let checkpoint = past.checkpoint.unwrap();
    assert!(checkpoint.messages.is_empty() && past.continuation.is_empty());
    assert_eq!(checkpoint.messages_offset, MESSAGES as u64);
    let big = Message {
        role: "user".into(),
        content: vec![7; 5_000],
    };
    client
        .save(SaveRequest {
            messages: vec![big.clone(), history()[0].clone()],
            message_offset: MESSAGES as u64,
            ..save("run-1", 4, b"{}")
        })
        .await
        .unwrap();
    let first = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            message_offset: MESSAGES as u64,
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        first.checkpoint.unwrap().messages,
        vec![big],
        "alone, whole"
    );
    let (rest, pages) = follow(&mut client, "run-1", first.continuation, MESSAGES + 1)
        .await
        .unwrap();
    assert_eq!((rest, pages), (vec![history()[0].clone()], 1));
}

/// A missing row inside a page, or a stored digest at a page's edge that does not match the
/// log, fails that page's verification: DATA_LOSS, never a page that skips or trusts it.
async fn a_missing_row_or_a_bad_edge_digest_fails_the_page(backend: Backend) {
    let (app, mut client) = paged_app(backend).await;
    save_history(&mut client, "run-1").await;
    save_history(&mut client, "run-2").await;
    let load = |run: &str| LoadLatestRequest {
        run_id: run.into(),
        capabilities: vec![PAGED],
        ..Default::default()
    };
    app.raw_sql("DELETE FROM messages WHERE run_id = 'run-1' AND seq = 3")
        .await;
    let refused = client.load_latest(load("run-1")).await.unwrap_err();
    assert_eq!(refused.code(), Code::DataLoss, "{refused:?}");
    let literal = match backend {
        Backend::Sqlite => "X'78'",
        _ => "'\\x78'::bytea",
    };
    // Message 9 ends the first page: its stored digest is the page's far edge.
    app.raw_sql(&format!(
        "UPDATE messages SET chain = {literal} WHERE run_id = 'run-2' AND seq = 9"
    ))
    .await;
    let refused = client.load_latest(load("run-2")).await.unwrap_err();
    assert_eq!(refused.code(), Code::DataLoss, "{refused:?}");
}

crate::for_each_backend!(
    an_offset_past_the_end_is_empty_and_a_large_message_comes_alone,
    a_long_history_comes_back_whole_a_page_at_a_time,
    an_older_client_gets_answer_too_large_never_a_cut_history,
    a_checkpoint_changed_between_pages_is_checkpoint_changed,
);

mod durable {
    use super::*;

    crate::for_each_durable_backend!(
        a_page_that_fails_its_link_is_data_loss_and_the_step_is_quarantined,
        validate_verifies_a_log_longer_than_its_window_whole,
        a_missing_row_or_a_bad_edge_digest_fails_the_page,
    );
}
