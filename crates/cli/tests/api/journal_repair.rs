//! A corrupt tool-journal entry on a real database (bytes flipped in SQLite and Postgres):
//! Resume (declaring it reads calls in doubt) falls back instead of failing with DATA_LOSS and
//! names the call, the worker puts the call to a human, and the operator's repair
//! (`checkpointd runs journal`) lets the run finish without sending the email again.

use std::collections::HashSet;

use checkpointd::proto::{ClientCapability, ResumeRequest, TaskState};

use crate::intents::{enqueue, flags, get, run_worker, run_worker_until_parked};
use crate::support::{Backend, TestApp, spawn_app};
use crate::support::{cli, stdout_of};

const RUN: &str = "corrupt-journal-run";
const STEP_2_EMAIL: &str = "step-2/send_email/0";

/// Flips the first byte of the journalled output of step 2's email.
async fn corrupt_the_email_result(app: &TestApp) {
    let flip = match app.backend {
        Backend::Sqlite => "output = CAST(X'00' || substr(output, 2) AS BLOB)",
        _ => "output = set_byte(output, 0, 0)",
    };
    let not_intent = match app.backend {
        Backend::Sqlite => "intent = 0",
        _ => "NOT intent",
    };
    app.raw_sql(&format!(
        "UPDATE tool_results SET {flip} \
         WHERE run_id = '{RUN}' AND call_id = '{STEP_2_EMAIL}' AND {not_intent}"
    ))
    .await;
}

async fn a_corrupt_entry_is_reported_in_doubt_and_repaired_without_a_duplicate(backend: Backend) {
    let app = spawn_app(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("emails.log");
    let task = enqueue(app.addr, RUN).await;
    let worker = |extra: &'static [&'static str]| {
        run_worker(app.addr, flags(&spool, "retry_with_key", extra))
    };
    // Checkpoints at steps 1 and 2, then an abort during step 3.
    worker(&["--crash-at-step", "3"]).await;
    assert_eq!(std::fs::read_to_string(&spool).unwrap().lines().count(), 2);
    corrupt_the_email_result(&app).await;

    // Resume does not fail: it restores step 1, which predates the damage, and names the call.
    let resumed = app
        .client()
        .await
        .resume(ResumeRequest {
            run_id: RUN.into(),
            capabilities: vec![ClientCapability::InDoubtCalls as i32],
            ..Default::default()
        })
        .await
        .expect("no DATA_LOSS")
        .into_inner();
    assert_eq!(resumed.recovered_from_step, 1, "{backend:?}");
    assert_eq!(resumed.corrupt_call_ids, [STEP_2_EMAIL], "{backend:?}");
    assert!(
        resumed
            .in_doubt
            .iter()
            .any(|call| call.call_id == STEP_2_EMAIL && call.corrupt),
        "{backend:?}"
    );

    // The worker never re-runs a corrupt call by itself: it asks.
    run_worker_until_parked(
        app.addr,
        flags(&spool, "retry_with_key", &[]),
        &task.task_id,
    )
    .await;
    let parked = get(app.addr, &task.task_id).await;
    assert_eq!(parked.state, TaskState::InputRequired as i32, "{parked:?}");
    assert_eq!(
        parked.approval.unwrap().action,
        format!("in_doubt {STEP_2_EMAIL}")
    );
    let journal = stdout_of(&cli(app.addr, &["runs", "journal", RUN]));
    assert!(journal.contains("corrupt"), "{journal}");

    stdout_of(&cli(
        app.addr,
        &[
            "runs",
            "journal",
            RUN,
            "--mark-done",
            STEP_2_EMAIL,
            "--output",
            r#"{"sent":true}"#,
            "--by",
            "bob",
        ],
    ));
    stdout_of(&cli(
        app.addr,
        &["tasks", "approve", &task.task_id, "--by", "bob"],
    ));
    let journal = stdout_of(&cli(app.addr, &["runs", "journal", RUN]));
    assert!(!journal.contains("corrupt"), "{journal}");
    assert!(journal.contains("repair: mark_done"), "{journal}");

    worker(&["--exit-after", "1"]).await;
    let done = get(app.addr, &task.task_id).await;
    assert_eq!(done.state, TaskState::Completed as i32, "{done:?}");
    // Steps 1, 2 and 4 send an email, each exactly once.
    let text = std::fs::read_to_string(&spool).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines.iter().collect::<HashSet<_>>().len(), 3, "{lines:?}");
}

// Multi-threaded: the server runs in this process, and the CLI processes the test waits on
// must find it answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_journal_entry_on_sqlite_is_repaired_without_a_duplicate() {
    a_corrupt_entry_is_reported_in_doubt_and_repaired_without_a_duplicate(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_journal_entry_on_postgres_is_repaired_without_a_duplicate() {
    a_corrupt_entry_is_reported_in_doubt_and_repaired_without_a_duplicate(Backend::Postgres).await;
}
