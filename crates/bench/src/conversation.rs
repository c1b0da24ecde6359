//! Long conversations: a 1,000-message conversation saved at every step, each Save carrying only
//! the new message. Bytes sent and latency per Save are reported at message 10, 100 and 1,000;
//! they should stay flat as the conversation grows.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use prost::Message as _;

use super::BoxError;
use super::clients::checkpoint_client;
use super::payload::agent_state;
use super::stats::{against_first, ms, percentile, ratio};
use checkpointd_protocol::v1::{Message, SaveRequest};

/// Where the conversation is reported.
pub const CHECKPOINTS: [usize; 3] = [10, 100, 1000];
/// Saves around each checkpoint that are pooled into its figures (per conversation).
const WINDOW: usize = 10;
/// The target: the last point within this factor of the first.
pub const TARGET_RATIO: f64 = 1.2;
/// Saves of the unrecorded warm-up conversation.
const WARMUP: usize = 50;
const STATE_BYTES: usize = 1024;
const MESSAGE_BYTES: usize = 400;

/// Figures at one point of the conversation, over every conversation run.
#[derive(Clone, Debug)]
pub struct ConversationPoint {
    pub store: &'static str,
    pub message: usize,
    pub p50: Duration,
    pub p99: Duration,
    /// Mean encoded Save request size around this point.
    pub bytes: f64,
}

/// Runs `conversations` conversations of `length` messages, one after the other.
pub async fn measure(
    store: &'static str,
    addr: SocketAddr,
    conversations: usize,
    length: usize,
) -> Result<Vec<ConversationPoint>, BoxError> {
    let mut client = checkpoint_client(addr).await?;
    let mut latencies = vec![Vec::new(); length + 1];
    let mut sizes = vec![0usize; length + 1];
    // The first conversation is a warm-up (connection, statement caches), and not recorded.
    for conversation in 0..=conversations {
        let run_id = format!(
            "bench-conversation-{store}-{}-{conversation}",
            std::process::id()
        );
        let steps = if conversation == 0 { WARMUP } else { length };
        for step in 1..=steps {
            let role = if step % 2 == 1 { "user" } else { "assistant" };
            let request = SaveRequest {
                run_id: run_id.clone(),
                step: step as i64,
                content_type: "application/json".to_owned(),
                state: agent_state(STATE_BYTES, step as u64),
                messages: vec![Message {
                    role: role.to_owned(),
                    content: agent_state(MESSAGE_BYTES, 1000 + step as u64),
                }],
                message_offset: step as u64 - 1,
                ..SaveRequest::default()
            };
            let size = request.encoded_len();
            let started = Instant::now();
            client.save(request).await?;
            if conversation > 0 {
                latencies[step].push(started.elapsed());
                sizes[step] += size;
            }
        }
    }
    Ok(CHECKPOINTS
        .iter()
        .copied()
        .filter(|&message| message <= length)
        .map(|message| {
            let window = message.saturating_sub(WINDOW - 1).max(1)..=message;
            let mut pooled: Vec<Duration> = window
                .clone()
                .flat_map(|step| latencies[step].iter().copied())
                .collect();
            pooled.sort_unstable();
            let bytes: usize = window.clone().map(|step| sizes[step]).sum();
            ConversationPoint {
                store,
                message,
                p50: percentile(&pooled, 50.0),
                p99: percentile(&pooled, 99.0),
                bytes: bytes as f64 / (window.count() * conversations) as f64,
            }
        })
        .collect())
}

pub fn print(points: &[ConversationPoint], conversations: usize) {
    println!();
    println!("== Long conversation: one Save per message, each carrying only the new message ==");
    println!(
        "({conversations} conversation(s) per store, 1 KB state + one {MESSAGE_BYTES} B message per Save; figures pool the {WINDOW} Saves up to each message)"
    );
    println!(
        "{:<10} {:>8} {:>12} {:>10} {:>10} {:>10} {:>10}",
        "store", "message", "bytes/Save", "p50", "p99", "bytes x", "p50 x"
    );
    let mut verdicts = Vec::new();
    for (point, first, is_last) in against_first(points, |p| p.store) {
        let bytes_ratio = ratio(point.bytes, first.bytes);
        let latency_ratio = ratio(ms(point.p50), ms(first.p50));
        println!(
            "{:<10} {:>8} {:>12.0} {:>10.3} {:>10.3} {:>10.2} {:>10.2}",
            point.store,
            point.message,
            point.bytes,
            ms(point.p50),
            ms(point.p99),
            bytes_ratio,
            latency_ratio
        );
        if is_last {
            let met = bytes_ratio <= TARGET_RATIO && latency_ratio <= TARGET_RATIO;
            verdicts.push(format!(
                "{}: message {} at {bytes_ratio:.2}x bytes and {latency_ratio:.2}x p50 of message {}: {}",
                point.store,
                point.message,
                first.message,
                if met { "flat" } else { "GROWS" }
            ));
        }
    }
    println!(
        "(times in ms; x = against the first row of the store; flat means within {TARGET_RATIO:.1}x)"
    );
    for verdict in verdicts {
        println!("  {verdict}");
    }
}
