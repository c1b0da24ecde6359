//! A load verifies what it returns from the chain digests stored beside it: with
//! JOURNAL_SCOPE_STEP a damaged digest before the step's entries or a damaged entry among them
//! is DATA_LOSS on LoadLatest and LoadAtStep, while Resume, which returns the whole journal,
//! falls back past it as before; with a message offset a damaged message after it or a damaged
//! digest at it is DATA_LOSS. What a load does not return it does not read: Validate does.

use checkpointd::proto::{
    ClientCapability, JournalScope, LoadAtStepRequest, LoadLatestRequest, Message, ResumeRequest,
    SaveRequest, ValidateRequest,
};
use tonic::Code;

use crate::support::requests::{message, save, tool};
use crate::support::{Backend, TestApp, spawn_app};

const STEP: i32 = JournalScope::Step as i32;

/// Entries 1-2 at step 1, 3-4 at step 2; checkpoints at step 1 (messages a b) and step 2
/// (a b c d), each covering the journal as it stood.
async fn journalled_run(app: &TestApp, run: &str) {
    let mut client = app.client().await;
    let batches: [(&[&str], &[Message]); 2] = [
        (&["c1", "c2"], &[message("user", "a"), message("user", "b")]),
        (&["c3", "c4"], &[message("user", "c"), message("user", "d")]),
    ];
    for (index, (calls, messages)) in batches.into_iter().enumerate() {
        let step = index as i64 + 1;
        for call in calls {
            client
                .record_tool_result(tool(run, call, step, call))
                .await
                .unwrap();
        }
        client
            .save(SaveRequest {
                messages: messages.to_vec(),
                message_offset: index as u64 * 2,
                ..save(run, step, b"{}")
            })
            .await
            .unwrap();
    }
}

fn bytea(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "X'0707070707070707070707070707070707070707070707070707070707070707'",
        _ => "'\\x0707070707070707070707070707070707070707070707070707070707070707'::bytea",
    }
}

fn latest(run: &str, journal: i32, message_offset: u64) -> LoadLatestRequest {
    LoadLatestRequest {
        run_id: run.into(),
        journal,
        message_offset,
        ..Default::default()
    }
}

fn at_two(run: &str) -> LoadAtStepRequest {
    LoadAtStepRequest {
        run_id: run.into(),
        step: 2,
        journal: STEP,
        ..Default::default()
    }
}

async fn a_step_scoped_load_detects_damage_before_or_inside_its_journal_window(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for run in ["sound", "digest-before", "entry-inside", "entry-outside"] {
        journalled_run(&app, run).await;
    }
    let answer = client
        .load_latest(latest("sound", STEP, 0))
        .await
        .unwrap()
        .into_inner();
    let calls: Vec<_> = answer
        .tool_results
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(calls, ["c3", "c4"]);

    let value = bytea(backend);
    app.raw_sql(&format!(
        "UPDATE tool_results SET chain = {value} WHERE run_id = 'digest-before' AND seq = 2;
         UPDATE tool_results SET output = {value} WHERE run_id = 'entry-inside' AND seq = 4;
         UPDATE tool_results SET output = {value} WHERE run_id = 'entry-outside' AND seq = 1"
    ))
    .await;
    for run in ["digest-before", "entry-inside"] {
        let refused = client.load_latest(latest(run, STEP, 0)).await.unwrap_err();
        assert_eq!(refused.code(), Code::DataLoss, "{run}: {refused:?}");
        let refused = client.load_at_step(at_two(run)).await.unwrap_err();
        assert_eq!(refused.code(), Code::DataLoss, "{run}: {refused:?}");
    }

    // Resume returns the whole journal: it restores the checkpoint before the damaged entry
    // and reports the entry's call in doubt, as it always has.
    let resumed = client
        .resume(ResumeRequest {
            run_id: "entry-inside".into(),
            capabilities: vec![ClientCapability::InDoubtCalls as i32],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 1);
    assert_eq!(resumed.skipped_steps, [2]);
    assert_eq!(resumed.corrupt_call_ids, ["c4"]);

    // An entry before the window is not what the step's load returns, so it is not read;
    // the whole journal is, and Validate verifies everything.
    let scoped = client
        .load_latest(latest("entry-outside", STEP, 0))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(scoped.checkpoint.unwrap().step, 2);
    let whole = client
        .load_latest(latest("entry-outside", JournalScope::All as i32, 0))
        .await
        .unwrap_err();
    assert_eq!(whole.code(), Code::DataLoss);
    let verdicts = client
        .validate(ValidateRequest {
            run_id: "entry-outside".into(),
            step: None,
        })
        .await
        .unwrap()
        .into_inner()
        .verdicts;
    assert!(
        verdicts.iter().all(|verdict| !verdict.valid),
        "{verdicts:?}"
    );
}

async fn a_load_from_an_offset_detects_a_damaged_message_after_it_or_digest_at_it(
    backend: Backend,
) {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for run in ["message-after", "digest-at"] {
        journalled_run(&app, run).await;
    }
    let none = JournalScope::None as i32;
    let value = bytea(backend);
    app.raw_sql(&format!(
        "UPDATE messages SET content = {value} WHERE run_id = 'message-after' AND seq = 3;
         UPDATE messages SET chain = {value} WHERE run_id = 'digest-at' AND seq = 1"
    ))
    .await;
    for run in ["message-after", "digest-at"] {
        let refused = client
            .load_at_step(LoadAtStepRequest {
                message_offset: 2,
                journal: none,
                ..at_two(run)
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::DataLoss, "{run}: {refused:?}");
    }
    // The step was quarantined: the latest load falls back past it, as past any corrupt one.
    let fallen_back = client
        .load_latest(latest("message-after", none, 2))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(fallen_back.checkpoint.unwrap().step, 1);
}

crate::for_each_durable_backend!(
    a_step_scoped_load_detects_damage_before_or_inside_its_journal_window,
    a_load_from_an_offset_detects_a_damaged_message_after_it_or_digest_at_it,
);
