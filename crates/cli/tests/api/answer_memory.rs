//! Large histories loaded by several clients at once keep a real `checkpointd serve` process
//! under the Helm chart's memory limit: each load holds one page, never the history, and every
//! client still gets the whole history back, verified, by following continuations.

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    ClientCapability, LoadAtStepRequest, LoadLatestRequest, Message, SaveRequest,
};
use sha2::{Digest, Sha256};
use tonic::transport::Channel;

use crate::memory_limits::{chart_memory_limit, proc_status};
use crate::support::{PgSchema, ServerProcess, connect};

const MIB: usize = 1 << 20;
const PAGED: i32 = ClientCapability::PagedMessages as i32;

/// Content of message `index`: 1 MiB, distinct per message.
fn content(index: usize) -> Vec<u8> {
    let mut bytes = vec![(index % 251) as u8; MIB - 64];
    bytes[..8].copy_from_slice(&(index as u64).to_be_bytes());
    bytes
}

/// Saves `saves` checkpoints of `per_save` one-MiB messages each.
async fn save_history(
    client: &mut CheckpointServiceClient<Channel>,
    run: &str,
    saves: usize,
    per_save: usize,
) {
    for save in 0..saves {
        let start = save * per_save;
        client
            .save(SaveRequest {
                run_id: run.into(),
                step: save as i64 + 1,
                content_type: "application/json".into(),
                state: b"{}".to_vec(),
                message_offset: start as u64,
                messages: (start..start + per_save)
                    .map(|index| Message {
                        role: "user".into(),
                        content: content(index),
                    })
                    .collect(),
                ..SaveRequest::default()
            })
            .await
            .expect("save a part of the history");
    }
}

/// Loads the run's latest checkpoint page by page; the digest of its messages and their count.
async fn load_whole(mut client: CheckpointServiceClient<Channel>, run: String) -> (Vec<u8>, usize) {
    let first = client
        .load_latest(LoadLatestRequest {
            run_id: run.clone(),
            capabilities: vec![PAGED],
            ..Default::default()
        })
        .await
        .expect("load the first page")
        .into_inner();
    let mut digest = Sha256::new();
    let mut count = 0;
    let mut page = first.checkpoint.expect("a checkpoint").messages;
    let mut continuation = first.continuation;
    loop {
        for message in &page {
            digest.update(&message.content);
        }
        count += page.len();
        if continuation.is_empty() {
            break;
        }
        let next = client
            .load_at_step(LoadAtStepRequest {
                run_id: run.clone(),
                continuation,
                capabilities: vec![PAGED],
                ..Default::default()
            })
            .await
            .expect("load the next page")
            .into_inner();
        page = next.checkpoint.expect("a checkpoint").messages;
        continuation = next.continuation;
    }
    (digest.finalize().to_vec(), count)
}

/// `readers` clients load a history of `saves` Saves of `per_save` one-MiB messages at once.
async fn concurrent_loads_stay_under_the_charts_limit(
    url: &str,
    saves: usize,
    per_save: usize,
    readers: usize,
) {
    let server = ServerProcess::start(url, &[]);
    let mut client = connect(server.addr).await;
    save_history(&mut client, "long", saves, per_save).await;
    let mut expected = Sha256::new();
    for index in 0..saves * per_save {
        expected.update(content(index));
    }
    let expected = expected.finalize().to_vec();
    let mut loads = tokio::task::JoinSet::new();
    for _ in 0..readers {
        loads.spawn(load_whole(connect(server.addr).await, "long".to_owned()));
    }
    for (digest, count) in loads.join_all().await {
        assert_eq!(count, saves * per_save);
        assert_eq!(digest, expected, "the joined pages are the saved history");
    }
    let peak = proc_status(server.pid(), "VmHWM");
    let limit = chart_memory_limit();
    eprintln!(
        "answers: peak {} MiB for {readers} loads of {} MiB (chart limit {} MiB)",
        peak / MIB as u64,
        saves * per_save,
        limit / MIB as u64
    );
    assert!(
        peak < limit,
        "peak RSS {} MiB is not under the chart's limit of {} MiB",
        peak / MIB as u64,
        limit / MIB as u64
    );
}

/// Twelve Saves of 15 MiB each: 180 MiB of history, four readers (the reported attack: 1.6 GiB
/// before paging); and 20 MiB, sixteen readers.
async fn both_shapes(url: impl Fn() -> String) {
    concurrent_loads_stay_under_the_charts_limit(&url(), 12, 15, 4).await;
    concurrent_loads_stay_under_the_charts_limit(&url(), 2, 10, 16).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_loads_of_long_histories_stay_under_the_charts_limit_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    both_shapes(|| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        format!(
            "sqlite://{}",
            path.join(format!("answers-{n}.db")).display()
        )
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_loads_of_long_histories_stay_under_the_charts_limit_on_postgres() {
    let long = PgSchema::create().await;
    let wide = PgSchema::create().await;
    let urls = [long.url(), wide.url()];
    let counter = std::sync::atomic::AtomicUsize::new(0);
    both_shapes(|| urls[counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst)].clone()).await;
}
