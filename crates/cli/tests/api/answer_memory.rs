//! Large histories loaded by several clients at once keep a real `checkpointd serve` process
//! under the Helm chart's memory limit: each load holds one page, never the history, and every
//! client still gets the whole history back, verified, by following continuations (sending a
//! page the busy server refused again, as a client retries UNAVAILABLE).

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{
    ClientCapability, LoadAtStepRequest, LoadLatestRequest, Message, SaveRequest,
};
use sha2::{Digest, Sha256};
use tonic::Code;
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

/// How many times the loads still refused are sent again, all at once, as clients would.
const RETRY_ROUNDS: usize = 4;

/// One client reading the run's latest checkpoint whole, page by page. A call refused as an
/// overload (UNAVAILABLE, retryable: the answer budget is full) leaves it at the page it asked
/// for, to be asked again in the next round; any other error fails the test.
struct Reader {
    client: CheckpointServiceClient<Channel>,
    run: String,
    digest: Sha256,
    count: usize,
    /// `None` before the first page (LoadLatest); then the continuation of the next page.
    continuation: Option<Vec<u8>>,
    refused: usize,
}

impl Reader {
    fn new(client: CheckpointServiceClient<Channel>, run: &str) -> Self {
        Self {
            client,
            run: run.to_owned(),
            digest: Sha256::new(),
            count: 0,
            continuation: None,
            refused: 0,
        }
    }

    /// Reads on until the last page (`true`) or a refusal (`false`).
    async fn advance(mut self) -> (Self, bool) {
        loop {
            let answer = match self.continuation.clone() {
                None => self
                    .client
                    .load_latest(LoadLatestRequest {
                        run_id: self.run.clone(),
                        capabilities: vec![PAGED],
                        ..Default::default()
                    })
                    .await
                    .map(|answer| {
                        let answer = answer.into_inner();
                        (answer.checkpoint, answer.continuation)
                    }),
                Some(continuation) => self
                    .client
                    .load_at_step(LoadAtStepRequest {
                        run_id: self.run.clone(),
                        continuation,
                        capabilities: vec![PAGED],
                        ..Default::default()
                    })
                    .await
                    .map(|answer| {
                        let answer = answer.into_inner();
                        (answer.checkpoint, answer.continuation)
                    }),
            };
            let (checkpoint, continuation) = match answer {
                Ok(page) => page,
                Err(status) if status.code() == Code::Unavailable => {
                    self.refused += 1;
                    return (self, false);
                }
                Err(status) => panic!("load a page: {status:?}"),
            };
            let page = checkpoint.expect("a checkpoint").messages;
            for message in &page {
                self.digest.update(&message.content);
            }
            self.count += page.len();
            if continuation.is_empty() {
                return (self, true);
            }
            self.continuation = Some(continuation);
        }
    }
}

/// Every reader reads the whole history, all at once; those refused are sent again together, a
/// round at a time, for at most [`RETRY_ROUNDS`] more rounds. On a slow machine (a debug build
/// on shared cores beside the rest of the suite) answers take longer, so more of a burst finds
/// the budget full. Returns the finished readers and how many calls were refused.
async fn read_all(mut pending: Vec<Reader>) -> (Vec<Reader>, usize) {
    let mut finished = Vec::new();
    for _ in 0..=RETRY_ROUNDS {
        let mut reads = tokio::task::JoinSet::new();
        for reader in pending.drain(..) {
            reads.spawn(reader.advance());
        }
        for (reader, done) in reads.join_all().await {
            if done {
                finished.push(reader);
            } else {
                pending.push(reader);
            }
        }
        if pending.is_empty() {
            break;
        }
    }
    let refused = finished.iter().chain(&pending).map(|r| r.refused).sum();
    assert!(
        pending.is_empty(),
        "{} of the readers were still refused after {RETRY_ROUNDS} retries ({refused} refusals)",
        pending.len()
    );
    (finished, refused)
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
    let mut clients = Vec::new();
    for _ in 0..readers {
        clients.push(Reader::new(connect(server.addr).await, "long"));
    }
    // Every reader must finish: the peak below is then that of every load admitted.
    let (finished, refused) = read_all(clients).await;
    for reader in finished {
        assert_eq!(reader.count, saves * per_save);
        assert_eq!(
            reader.digest.finalize().to_vec(),
            expected,
            "the joined pages are the saved history"
        );
    }
    let peak = proc_status(server.pid(), "VmHWM");
    let limit = chart_memory_limit();
    eprintln!(
        "answers: peak {} MiB for {readers} loads of {} MiB, {refused} calls refused and sent \
         again (chart limit {} MiB)",
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
