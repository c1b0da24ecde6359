//! A refusal changes nothing: each state-changing engine call, provoked into each of its
//! refusals, leaves the run exactly as it was (epoch, heads, messages, journal, quarantine).
//! One table of refusals, run against every backend.

use crate::service::Engine;
use crate::service::ResumeOptions;
use checkpointd_core::domain::{Epoch, MessageWindow, RunInfo, RunKey, Step};
use checkpointd_core::error::Error;
use checkpointd_storage::store::Which;
use checkpointd_storage::store::tests::journal::intent;
use checkpointd_storage::store::tests::{TestBackend, checkpoint, run, texts, tool};

/// Every refusal the table provokes.
#[derive(Clone, Copy, Debug)]
enum Refusal {
    /// An older client (no paging) whose history is over its unpaged limit.
    ResumeTooLargeForAnOlderClient,
    /// An older client (no in-doubt capability) on a run with an intent without result.
    ResumeWithCallsInDoubtForAnOlderClient,
    /// An older client's Resume whose answer is too large and whose run has calls in doubt.
    ResumeRefusedTwiceForAnOlderClient,
    LoadTooLargeForAnOlderClient,
    SaveWithAStaleEpoch,
    SaveOfOtherContentAtASavedStep,
    ToolResultWithAStaleEpoch,
    ToolResultsWithAStaleEpoch,
    ToolIntentWithAStaleEpoch,
    DeleteWithAStaleEpoch,
}

const TABLE: [(Refusal, &str); 10] = [
    (Refusal::ResumeTooLargeForAnOlderClient, "ANSWER_TOO_LARGE"),
    (
        Refusal::ResumeWithCallsInDoubtForAnOlderClient,
        "CAPABILITY_REQUIRED",
    ),
    (
        Refusal::ResumeRefusedTwiceForAnOlderClient,
        "CAPABILITY_REQUIRED",
    ),
    (Refusal::LoadTooLargeForAnOlderClient, "ANSWER_TOO_LARGE"),
    (Refusal::SaveWithAStaleEpoch, "STALE_EPOCH"),
    (Refusal::SaveOfOtherContentAtASavedStep, "STEP_CONFLICT"),
    (Refusal::ToolResultWithAStaleEpoch, "STALE_EPOCH"),
    (Refusal::ToolResultsWithAStaleEpoch, "STALE_EPOCH"),
    (Refusal::ToolIntentWithAStaleEpoch, "STALE_EPOCH"),
    (Refusal::DeleteWithAStaleEpoch, "STALE_EPOCH"),
];

/// The unpaged limit of the table's older client: less than the run's history.
const UNPAGED_BYTES: usize = 8;

/// Everything a refusal must leave as it was.
#[derive(Debug, PartialEq, Eq)]
struct RunState {
    head: RunInfo,
    messages: Vec<String>,
    journal: Vec<(u64, String, String)>,
    quarantined: Vec<Step>,
}

async fn state(engine: &Engine, key: &RunKey) -> RunState {
    let store = &engine.store;
    let latest = store
        .load(key, Which::LatestBelow(None))
        .await
        .unwrap()
        .expect("a latest checkpoint");
    let mut quarantined = Vec::new();
    for step in store.steps(key).await.unwrap() {
        let at = store.load(key, Which::At(step)).await.unwrap().unwrap();
        if at.checkpoint.quarantine.is_some() {
            quarantined.push(step);
        }
    }
    RunState {
        head: store.run_info(key).await.unwrap().expect("the run"),
        messages: texts(&latest.checkpoint.messages),
        journal: store
            .tools(key)
            .await
            .unwrap()
            .into_iter()
            .map(|record| {
                let kind = format!("{:?}", record.kind);
                (record.seq, record.call_id.as_str().to_owned(), kind)
            })
            .collect(),
        quarantined,
    }
}

/// A run owned at epoch 2, with two checkpoints, a result and a call in doubt.
async fn owned_run(engine: &Engine, key: &RunKey) {
    let store = &engine.store;
    store.begin_resume(key).await.unwrap();
    let epoch = store.begin_resume(key).await.unwrap();
    let mut first = checkpoint(key, 1, 0, &["hello", "world"]);
    first.epoch = epoch;
    store.save(&first).await.unwrap();
    let mut result = tool(key, "search-1", "found");
    result.epoch = epoch;
    store.record_tool_result(&result).await.unwrap();
    let mut second = checkpoint(key, 2, 2, &["a reply longer than the unpaged limit"]);
    second.epoch = epoch;
    second.tool_count = Some(1);
    store.save(&second).await.unwrap();
    let mut mail = intent(key, "mail-1");
    mail.epoch = epoch;
    mail.step = Step::new(2);
    store.record_tool_intent(&mail).await.unwrap();
}

async fn provoke(engine: &Engine, key: &RunKey, refusal: Refusal) -> Error {
    let stale = Epoch::new(1);
    let older_client = ResumeOptions {
        in_doubt_calls: true,
        max_message_bytes: UNPAGED_BYTES,
        whole_answer: true,
        ..ResumeOptions::default()
    };
    match refusal {
        Refusal::ResumeTooLargeForAnOlderClient => {
            engine.resume_with(key, older_client).await.map(drop)
        }
        Refusal::ResumeWithCallsInDoubtForAnOlderClient => engine
            .resume_with(key, ResumeOptions::default())
            .await
            .map(drop),
        Refusal::ResumeRefusedTwiceForAnOlderClient => {
            let options = ResumeOptions {
                in_doubt_calls: false,
                ..older_client
            };
            engine.resume_with(key, options).await.map(drop)
        }
        Refusal::LoadTooLargeForAnOlderClient => {
            let window = MessageWindow::new(0, UNPAGED_BYTES);
            engine
                .refuse_unpaged_overflow(key, Which::LatestBelow(None), window)
                .await
        }
        Refusal::SaveWithAStaleEpoch => {
            let mut save = checkpoint(key, 3, 3, &["late"]);
            save.epoch = stale;
            engine.save(&save).await.map(drop)
        }
        Refusal::SaveOfOtherContentAtASavedStep => {
            let mut save = checkpoint(key, 2, 2, &["another reply"]);
            save.epoch = Epoch::new(2);
            save.tool_count = Some(1);
            engine.save(&save).await.map(drop)
        }
        Refusal::ToolResultWithAStaleEpoch => {
            let mut result = tool(key, "search-2", "late");
            result.epoch = stale;
            engine.record_tool_result(&result).await.map(drop)
        }
        Refusal::ToolResultsWithAStaleEpoch => {
            let mut batch = [tool(key, "search-2", "late"), tool(key, "search-3", "late")];
            for result in &mut batch {
                result.epoch = stale;
            }
            engine.record_tool_results(&batch).await.map(drop)
        }
        Refusal::ToolIntentWithAStaleEpoch => {
            let mut late = intent(key, "mail-2");
            late.epoch = stale;
            engine.record_tool_intent(&late).await.map(drop)
        }
        Refusal::DeleteWithAStaleEpoch => engine
            .delete_checkpoints(key, Some(stale), &[Step::new(1)])
            .await
            .map(drop),
    }
    .expect_err("the call is refused")
}

pub(crate) async fn every_refusal_leaves_the_run_as_it_was(backend: &impl TestBackend) {
    let engine = Engine::new(backend.store());
    for (index, (refusal, reason)) in TABLE.into_iter().enumerate() {
        let key = run("default", &format!("refused-{index}"));
        owned_run(&engine, &key).await;
        let before = state(&engine, &key).await;
        let error = provoke(&engine, &key, refusal).await;
        assert_eq!(error.reason(), reason, "{refusal:?}: {error}");
        assert_eq!(
            state(&engine, &key).await,
            before,
            "{refusal:?} changed the run"
        );
    }
}

/// A refused Resume took no epoch: the writer that holds the run saves on as if nothing
/// happened, however often the older client retries.
pub(crate) async fn a_refused_resume_retried_leaves_the_writer_its_epoch(
    backend: &impl TestBackend,
) {
    let engine = Engine::new(backend.store());
    let key = run("default", "writer");
    owned_run(&engine, &key).await;
    let older_client = ResumeOptions {
        in_doubt_calls: true,
        max_message_bytes: UNPAGED_BYTES,
        whole_answer: true,
        ..ResumeOptions::default()
    };
    for _ in 0..5 {
        let refused = engine.resume_with(&key, older_client).await.unwrap_err();
        assert_eq!(refused.reason(), "ANSWER_TOO_LARGE");
    }
    let mut next = checkpoint(&key, 3, 3, &["still mine"]);
    next.epoch = Epoch::new(2);
    next.tool_count = Some(2);
    engine.save(&next).await.unwrap();
    // A paging client of the same size limit is answered, and fences.
    let paging = ResumeOptions {
        whole_answer: false,
        ..older_client
    };
    let resumed = engine.resume_with(&key, paging).await.unwrap();
    assert_eq!(resumed.epoch, Epoch::new(3));
    assert!(resumed.checkpoint.unwrap().continues());
}
