//! The service's metrics, by the names operators query. Instruments come from the global meter:
//! until a provider is installed (`serve`, `worker`), every call here is a no-op.
//!
//! | Instrument | Kind | Attributes |
//! | --- | --- | --- |
//! | `checkpointd.rpc.duration` (s) | histogram | `rpc.method`, `rpc.grpc.status_code` |
//! | `checkpointd.store.duration` (s) | histogram | `db.operation`, `db.system`, `outcome` |
//! | `checkpointd.saves` | counter | `db.system` |
//! | `checkpointd.save.size` (By) | counter | `db.system` |
//! | `checkpointd.cache.lookups` | counter | `checkpoint.cache_hit` |
//! | `checkpointd.cache.bypasses` | counter | |
//! | `checkpointd.cache.hit_ratio` | gauge | |
//! | `checkpointd.queue.depth` | gauge | `state` |
//! | `checkpointd.request_budget.used` (By) | gauge | |
//! | `checkpointd.request_budget.refusals` | counter | `reason` (`tenant`, `connection`, `server`, `body_timeout`) |
//! | `checkpointd.recoveries` | counter | `resumed_from` (`checkpoint`, `scratch`) |
//! | `checkpointd.checkpoints.corrupt_skipped` | counter | |
//! | `checkpointd.answers.cut_off` | counter | |
//! | `checkpointd.runner.save.duration` (s) | histogram | |
//! | `checkpointd.runner.tool_calls` | counter | `outcome` (`executed`, `replayed`) |
//! | `checkpointd.webhook.attempts` | counter | `outcome` (`delivered`, `failed`, `given_up`) |
//! | `checkpointd.webhook.outbox_depth` | gauge | `status` (`pending`, `failing`, `delivered`, `given_up`) |

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, ObservableGauge};

/// Latency buckets in seconds, from sub-millisecond cache hits to slow database commits.
const LATENCY_BUCKETS: [f64; 15] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

struct Instruments {
    rpc_duration: Histogram<f64>,
    store_duration: Histogram<f64>,
    saves: Counter<u64>,
    save_size: Counter<u64>,
    cache_lookups: Counter<u64>,
    cache_bypasses: Counter<u64>,
    recoveries: Counter<u64>,
    corrupt_skipped: Counter<u64>,
    answers_cut_off: Counter<u64>,
    runner_save_duration: Histogram<f64>,
    tool_calls: Counter<u64>,
    request_budget_refusals: Counter<u64>,
    webhook_attempts: Counter<u64>,
    _outbox_depth: ObservableGauge<u64>,
    _cache_hit_ratio: ObservableGauge<f64>,
    _queue_depth: ObservableGauge<u64>,
    _request_budget_used: ObservableGauge<u64>,
}

/// Lookups and hits since start, for the hit-ratio gauge.
static CACHE_LOOKUPS: AtomicU64 = AtomicU64::new(0);
static CACHE_HITS: AtomicU64 = AtomicU64::new(0);
/// The last queue depth poll: tasks per state.
static QUEUE_DEPTH: Mutex<Vec<(&'static str, u64)>> = Mutex::new(Vec::new());
/// The last outbox poll: webhook deliveries per status.
static OUTBOX_DEPTH: Mutex<Vec<(&'static str, u64)>> = Mutex::new(Vec::new());
/// Request bytes the calls in flight hold of the server's request budget.
static REQUEST_BUDGET_USED: AtomicU64 = AtomicU64::new(0);

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter("checkpointd");
        let latency = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(LATENCY_BUCKETS.to_vec())
                .build()
        };
        let counter = |name: &'static str, description: &'static str| {
            meter
                .u64_counter(name)
                .with_description(description)
                .build()
        };
        Instruments {
            rpc_duration: latency(
                "checkpointd.rpc.duration",
                "gRPC call latency at the server",
            ),
            store_duration: latency(
                "checkpointd.store.duration",
                "Latency of one store operation",
            ),
            saves: counter("checkpointd.saves", "Checkpoints durably saved"),
            save_size: meter
                .u64_counter("checkpointd.save.size")
                .with_unit("By")
                .with_description("State and new message bytes written by saves")
                .build(),
            cache_lookups: counter("checkpointd.cache.lookups", "Cache lookups, by hit"),
            cache_bypasses: counter(
                "checkpointd.cache.bypasses",
                "Cache operations skipped because the cache was unreachable",
            ),
            recoveries: counter("checkpointd.recoveries", "Runs resumed"),
            corrupt_skipped: counter(
                "checkpointd.checkpoints.corrupt_skipped",
                "Checkpoints that failed verification and were skipped",
            ),
            answers_cut_off: counter(
                "checkpointd.answers.cut_off",
                "Answers not read within --answer-send-timeout, cut off and their budget returned",
            ),
            runner_save_duration: latency(
                "checkpointd.runner.save.duration",
                "Save latency as the runner sees it",
            ),
            tool_calls: counter(
                "checkpointd.runner.tool_calls",
                "Tool calls, executed or replayed from the journal",
            ),
            request_budget_refusals: counter(
                "checkpointd.request_budget.refusals",
                "Calls refused for want of request budget (by the share found full) or for a \
                 body that did not arrive in time",
            ),
            webhook_attempts: counter(
                "checkpointd.webhook.attempts",
                "Webhook delivery attempts, by outcome (a failure that is given up counts as given_up)",
            ),
            _outbox_depth: meter
                .u64_observable_gauge("checkpointd.webhook.outbox_depth")
                .with_description("Webhook deliveries in the outbox, by status")
                .with_callback(|observer| {
                    let depth = OUTBOX_DEPTH.lock().map(|d| d.clone()).unwrap_or_default();
                    for (status, count) in depth {
                        observer.observe(count, &[KeyValue::new("status", status)]);
                    }
                })
                .build(),
            _cache_hit_ratio: meter
                .f64_observable_gauge("checkpointd.cache.hit_ratio")
                .with_description("Cache hits over lookups since start")
                .with_callback(|observer| {
                    let lookups = CACHE_LOOKUPS.load(Ordering::Relaxed);
                    if lookups > 0 {
                        let hits = CACHE_HITS.load(Ordering::Relaxed);
                        observer.observe(hits as f64 / lookups as f64, &[]);
                    }
                })
                .build(),
            _queue_depth: meter
                .u64_observable_gauge("checkpointd.queue.depth")
                .with_description("Tasks in the queue, by state")
                .with_callback(|observer| {
                    let depth = QUEUE_DEPTH.lock().map(|d| d.clone()).unwrap_or_default();
                    for (state, count) in depth {
                        observer.observe(count, &[KeyValue::new("state", state)]);
                    }
                })
                .build(),
            _request_budget_used: meter
                .u64_observable_gauge("checkpointd.request_budget.used")
                .with_unit("By")
                .with_description(
                    "Request bytes held by calls in flight, of --max-inflight-request-bytes",
                )
                .with_callback(|observer| {
                    observer.observe(REQUEST_BUDGET_USED.load(Ordering::Relaxed), &[]);
                })
                .build(),
        }
    })
}

/// Creates every instrument now and starts the counters at zero, so scrapes and exports show
/// the series (a rate over zero, not a missing series) before the first event.
pub fn register() {
    let instruments = instruments();
    instruments.corrupt_skipped.add(0, &[]);
    instruments.answers_cut_off.add(0, &[]);
    instruments.cache_bypasses.add(0, &[]);
    for hit in [true, false] {
        instruments
            .cache_lookups
            .add(0, &[KeyValue::new("checkpoint.cache_hit", hit)]);
    }
    for from in ["checkpoint", "scratch"] {
        instruments
            .recoveries
            .add(0, &[KeyValue::new("resumed_from", from)]);
    }
    for outcome in ["executed", "replayed"] {
        instruments
            .tool_calls
            .add(0, &[KeyValue::new("outcome", outcome)]);
    }
}

/// One served gRPC call. `method` is the request path, taken by value so that the attribute
/// does not copy it again; `status` the gRPC status code.
pub fn record_rpc(method: String, status: i64, latency: Duration) {
    instruments().rpc_duration.record(
        latency.as_secs_f64(),
        &[
            KeyValue::new("rpc.method", method),
            KeyValue::new("rpc.grpc.status_code", status),
        ],
    );
}

/// One store operation against `db_system` (`postgresql`, `sqlite`, `memory`).
pub fn record_store(operation: &'static str, db_system: &'static str, ok: bool, latency: Duration) {
    instruments().store_duration.record(
        latency.as_secs_f64(),
        &[
            KeyValue::new("db.operation", operation),
            KeyValue::new("db.system", db_system),
            KeyValue::new("outcome", if ok { "ok" } else { "error" }),
        ],
    );
}

/// Runs one storage operation inside `span` and records its latency with [`record_store`]:
/// what the store and queue wrappers do around every call.
pub async fn observe_store<T, E>(
    span: tracing::Span,
    operation: &'static str,
    db_system: &'static str,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, E> {
    use tracing::Instrument as _;
    let started = std::time::Instant::now();
    let outcome = work.instrument(span).await;
    record_store(operation, db_system, outcome.is_ok(), started.elapsed());
    outcome
}

/// A save that wrote `bytes` of state and new messages.
pub fn record_save(db_system: &'static str, bytes: u64) {
    let attributes = [KeyValue::new("db.system", db_system)];
    let instruments = instruments();
    instruments.saves.add(1, &attributes);
    instruments.save_size.add(bytes, &attributes);
}

/// A cache lookup; feeds the lookup counter and the hit-ratio gauge.
pub fn record_cache_lookup(hit: bool) {
    CACHE_LOOKUPS.fetch_add(1, Ordering::Relaxed);
    if hit {
        CACHE_HITS.fetch_add(1, Ordering::Relaxed);
    }
    instruments()
        .cache_lookups
        .add(1, &[KeyValue::new("checkpoint.cache_hit", hit)]);
}

/// A cache read or write skipped because the cache was unreachable (served from the store).
pub fn record_cache_bypass() {
    instruments().cache_bypasses.add(1, &[]);
}

/// A Resume: from a checkpoint, or from scratch when the run had none valid.
pub fn record_recovery(from_checkpoint: bool) {
    let from = if from_checkpoint {
        "checkpoint"
    } else {
        "scratch"
    };
    instruments()
        .recoveries
        .add(1, &[KeyValue::new("resumed_from", from)]);
}

/// A checkpoint that failed verification and was skipped (quarantined).
pub fn record_corrupt_skipped() {
    instruments().corrupt_skipped.add(1, &[]);
}

/// An answer was not read within the send deadline and was cut off.
pub fn record_answer_cut_off() {
    instruments().answers_cut_off.add(1, &[]);
}

/// A call took `bytes` of the server's request budget.
pub fn take_request_budget(bytes: u64) {
    REQUEST_BUDGET_USED.fetch_add(bytes, Ordering::Relaxed);
}

/// A call refused by the request budget: `reason` names the share it found full (`tenant`,
/// `connection`, `server`) or `body_timeout`.
pub fn refuse_request_budget(reason: &'static str) {
    instruments()
        .request_budget_refusals
        .add(1, &[KeyValue::new("reason", reason)]);
}

/// A call gave back `bytes` it took with [`take_request_budget`].
pub fn return_request_budget(bytes: u64) {
    REQUEST_BUDGET_USED.fetch_sub(bytes, Ordering::Relaxed);
}

/// The latest tasks-per-state poll, for the queue-depth gauge.
pub fn set_queue_depth(depth: Vec<(&'static str, u64)>) {
    if let Ok(mut current) = QUEUE_DEPTH.lock() {
        *current = depth;
    }
}

/// One webhook delivery attempt: `delivered`, `failed` (to be retried) or `given_up`.
pub fn record_webhook_delivery(outcome: &'static str) {
    instruments()
        .webhook_attempts
        .add(1, &[KeyValue::new("outcome", outcome)]);
}

/// The latest deliveries-per-status poll, for the outbox-depth gauge.
pub fn set_outbox_depth(depth: Vec<(&'static str, u64)>) {
    if let Ok(mut current) = OUTBOX_DEPTH.lock() {
        *current = depth;
    }
}

/// A save as the runner timed it, network included.
pub fn record_runner_save(latency: Duration) {
    instruments()
        .runner_save_duration
        .record(latency.as_secs_f64(), &[]);
}

/// A tool call the runner executed, or answered from the journal instead (`replayed`).
pub fn record_tool_call(replayed: bool) {
    let outcome = if replayed { "replayed" } else { "executed" };
    instruments()
        .tool_calls
        .add(1, &[KeyValue::new("outcome", outcome)]);
}
