//! A refused Resume changes nothing: an older client (no paging capability) whose history is
//! over `--max-unpaged-answer-bytes`, retrying Resume against a real `checkpointd serve`,
//! never moves the epoch, so the live writer beside it keeps saving.

use checkpointd::proto::{ClientCapability, GetRunRequest, Message, ResumeRequest, SaveRequest};
use tonic::Code;
use tonic_types::StatusExt;

use crate::support::requests::save;
use crate::support::{ServerProcess, connect};

const CAPABILITIES: [i32; 2] = [
    ClientCapability::PagedMessages as i32,
    ClientCapability::InDoubtCalls as i32,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_clients_refused_resumes_leave_the_live_writer_its_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("refused.db").display());
    let server = ServerProcess::start(&url, &["--max-unpaged-answer-bytes", "1000"]);
    let mut writer = connect(server.addr).await;
    let mut older = connect(server.addr).await;
    let run = "refused-resume";
    let epoch = writer
        .resume(ResumeRequest {
            run_id: run.into(),
            capabilities: CAPABILITIES.to_vec(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .epoch;
    // Three messages of 600 bytes: 1800 bytes, over the older client's 1000.
    let messages: Vec<Message> = (0..3)
        .map(|i| Message {
            role: "user".into(),
            content: vec![b'a' + i; 600],
        })
        .collect();
    writer
        .save(SaveRequest {
            messages,
            epoch: Some(epoch),
            ..save(run, 1, b"{}")
        })
        .await
        .unwrap();
    for retry in 0..5 {
        let refused = older
            .resume(ResumeRequest {
                run_id: run.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
        let reason = refused.get_details_error_info().unwrap().reason;
        assert_eq!(reason, "ANSWER_TOO_LARGE");
        // The writer, still holding its epoch, saves on between the retries.
        writer
            .save(SaveRequest {
                message_offset: 3,
                epoch: Some(epoch),
                ..save(run, retry + 2, b"{}")
            })
            .await
            .unwrap_or_else(|status| {
                panic!("the writer was fenced after retry {retry}: {status:?}")
            });
    }
    let head = writer
        .get_run(GetRunRequest { run_id: run.into() })
        .await
        .unwrap()
        .into_inner()
        .run
        .unwrap();
    assert_eq!(head.epoch, epoch);
    assert_eq!(head.latest_step, Some(6));
}

/// An older client's loads and Resumes over `--max-unpaged-answer-bytes` are refused from the
/// stored sizes: the server reads none of the history for them, so six such calls leave its
/// memory where it was (before, each read 16 MiB first: VmRSS 62 -> 184 MiB for six).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_clients_oversized_answers_are_refused_without_reading_the_history() {
    const MIB: u64 = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("sizes.db").display());
    let server = ServerProcess::start(&url, &[]);
    let mut client = connect(server.addr).await;
    let run = "long-history";
    // 20 MiB over five Saves of four 1 MiB messages: over the default 16 MiB unpaged limit.
    for save_index in 0..5u8 {
        let messages = (0..4u8)
            .map(|i| Message {
                role: "user".into(),
                content: vec![save_index * 4 + i; MIB as usize],
            })
            .collect();
        client
            .save(SaveRequest {
                messages,
                message_offset: u64::from(save_index) * 4,
                ..save(run, i64::from(save_index) + 1, b"{}")
            })
            .await
            .unwrap();
    }
    let idle = crate::memory_limits::proc_status(server.pid(), "VmRSS");
    for _ in 0..3 {
        let refused = client
            .load_latest(checkpointd::proto::LoadLatestRequest {
                run_id: run.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            refused.get_details_error_info().unwrap().reason,
            "ANSWER_TOO_LARGE"
        );
        let refused = client
            .resume(ResumeRequest {
                run_id: run.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            refused.get_details_error_info().unwrap().reason,
            "ANSWER_TOO_LARGE"
        );
    }
    let after = crate::memory_limits::proc_status(server.pid(), "VmRSS");
    let peak = crate::memory_limits::proc_status(server.pid(), "VmHWM");
    eprintln!(
        "six refused unpaged calls: VmRSS {} -> {} MiB (peak {} MiB)",
        idle / MIB,
        after / MIB,
        peak / MIB
    );
    // Reading the 16 MiB window even once would raise the resident size by about that much.
    assert!(after < idle + 8 * MIB, "VmRSS {idle} -> {after}");
    let head = client
        .get_run(GetRunRequest { run_id: run.into() })
        .await
        .unwrap()
        .into_inner()
        .run
        .unwrap();
    assert_eq!(head.epoch, 0, "a refused Resume took an epoch");
}
