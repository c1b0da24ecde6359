//! Tracing overhead: Save p50 on a server exporting traces and metrics over OTLP against the
//! same server with no exporter. Both are `checkpointd serve` processes (telemetry is
//! process-wide), fed by one client each, taking turns round by round.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::BoxError;
use super::clients::{BenchClient, GrpcClient};
use super::payload::agent_state;
use super::scenario::Effort;
use super::server_process::{CheckpointdBinary, ServerProcess};
use super::stats::{Samples, Summary, ms, ratio};
use super::targets::{Row, Targets};
use checkpointd_testkit::OtlpReceiver;

/// A 5% difference is a few tens of microseconds: more samples and finer interleaving than the
/// core scenario keep it above the noise.
const SAMPLES_PER_ITERATION: usize = 4;
const ROUNDS_PER_ROUND: usize = 8;
/// State size of every Save.
const STATE_BYTES: usize = 1024;

/// One store's side-by-side figures.
#[derive(Clone, Debug)]
pub struct Overhead {
    pub store: &'static str,
    pub off: Summary,
    pub on: Summary,
    /// Spans the collector received from the exporting server.
    pub spans_received: usize,
}

impl Overhead {
    pub fn ratio(&self) -> f64 {
        ratio(ms(self.on.p50), ms(self.off.p50))
    }
}

/// Measures each `(store label, database URL pair)`: one URL for the server without export,
/// one for the server with it.
pub async fn measure(
    binary: &CheckpointdBinary,
    stores: &[(&'static str, String, String)],
    effort: Effort,
) -> Result<Vec<Overhead>, BoxError> {
    let receiver = OtlpReceiver::start().await?;
    let endpoint = receiver.endpoint();
    let mut results = Vec::new();
    for (store, off_url, on_url) in stores {
        let spans_before = receiver.spans().len();
        let off = ServerProcess::start(binary, off_url, &[], &[]).await?;
        let on = ServerProcess::start(binary, on_url, &["--otlp-endpoint", &endpoint], &[]).await?;
        let state = Arc::new(agent_state(STATE_BYTES, 11));
        let mut clients = Vec::new();
        for (server, name) in [(&off, "off"), (&on, "on")] {
            let run_id = format!("bench-tracing-{store}-{name}-{}", std::process::id());
            clients.push(GrpcClient::connect(server.addr, run_id, state.clone()).await?);
        }
        // Warm-up: connections, prepared statements, the exporter's first connection.
        for client in &mut clients {
            for _ in 0..effort.warmup.max(1) * 5 {
                client.write_next().await?;
            }
        }
        let rounds = effort.rounds * ROUNDS_PER_ROUND;
        let per_round = (effort.iterations * SAMPLES_PER_ITERATION)
            .div_ceil(rounds)
            .max(1);
        let samples = take_turns(&mut clients, rounds, per_round, async |client| {
            client.write_next().await
        })
        .await?;
        off.stop().await?;
        // Stopping flushes the exporter, so every span of the run reaches the collector.
        on.stop().await?;
        results.push(Overhead {
            store,
            off: samples[0].summary(),
            on: samples[1].summary(),
            spans_received: receiver.spans().len() - spans_before,
        });
    }
    receiver.stop().await;
    Ok(results)
}

/// `rounds` rounds in which each client in turn makes `per_round` calls of `call`, timed one
/// by one; the order rotates every round (with two clients: alternates), so no client always
/// follows another's disk flushes. Each client's samples, in the clients' order.
pub async fn take_turns<C>(
    clients: &mut [C],
    rounds: usize,
    per_round: usize,
    mut call: impl AsyncFnMut(&mut C) -> Result<Duration, BoxError>,
) -> Result<Vec<Samples>, BoxError> {
    let mut samples = vec![Samples::default(); clients.len()];
    for round in 0..rounds {
        for offset in 0..clients.len() {
            let index = (round + offset) % clients.len();
            let started = Instant::now();
            let mut latencies = Vec::with_capacity(per_round);
            for _ in 0..per_round {
                latencies.push(call(&mut clients[index]).await?);
            }
            samples[index].add_batch(&latencies, started.elapsed());
        }
    }
    Ok(samples)
}

pub fn print(results: &[Overhead], effort: Effort, targets: &mut Targets) {
    println!();
    println!("== Tracing overhead: Save, export on against off, 1 client, 1 KB state ==");
    println!(
        "(two `checkpointd serve` processes per store, one exporting traces and metrics over OTLP/gRPC to an in-process collector; {} Saves each, in {} alternating rounds)",
        effort.iterations * SAMPLES_PER_ITERATION,
        effort.rounds * ROUNDS_PER_ROUND
    );
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>7}",
        "store", "off p50", "on p50", "off p99", "on p99", "on/off", "spans", "target"
    );
    for r in results {
        targets.record(Row::Tracing, r.store, r.ratio());
        println!(
            "{:<10} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>8.3} {:>8} {:>7}",
            r.store,
            ms(r.off.p50),
            ms(r.on.p50),
            ms(r.off.p99),
            ms(r.on.p99),
            r.ratio(),
            r.spans_received,
            if Row::Tracing.bound().met_by(r.ratio()) {
                "met"
            } else {
                "MISSED"
            }
        );
    }
    println!(
        "(times in ms; target: on/off p50 {})",
        Row::Tracing.bound().label()
    );
}
