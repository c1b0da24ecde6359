//! History with the prefix held: LoadLatest, LoadAtStep and Resume on runs whose message log
//! holds 10 up to 100,000 messages, each asking only for what follows the log (`message_offset`
//! = its length, as a client that already holds the history does), and on a run whose journal
//! holds 10,000 entries, loaded with `JOURNAL_SCOPE_STEP`. What is returned is the same for
//! every run, so the cost should not follow the run's age: each row is printed against the
//! 10-message run.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tonic::transport::Channel;

use super::BoxError;
use super::clients::checkpoint_client;
use super::history::state_save;
use super::payload::agent_state;
use super::stats::{Samples, Summary, ms, ratio};
use super::targets::{Row, Targets};
use checkpointd_protocol::v1::checkpoint_service_client::CheckpointServiceClient;
use checkpointd_protocol::v1::{
    Checkpoint, ClientCapability, JournalScope, LoadAtStepRequest, LoadLatestRequest, Message,
    RecordToolResultsRequest, ResumeRequest, SaveRequest, ToolResultInput,
};

/// The baseline every row is compared with: a run of this many messages and no bulk journal.
pub const BASELINE_MESSAGES: usize = 10;
/// The server's limits per request: messages per Save, results per RecordToolResults.
const MESSAGES_PER_SAVE: usize = 10_000;
const RESULTS_PER_BATCH: usize = 1000;
const MESSAGE_BYTES: usize = 256;
const STATE_BYTES: usize = 1024;
const OUTPUT_BYTES: usize = 128;
/// Results journalled at the final step of every run: what JOURNAL_SCOPE_STEP returns.
const FINAL_RESULTS: usize = 2;

/// How much the scenario does.
#[derive(Clone, Copy, Debug)]
pub struct HeldPrefixEffort {
    /// Messages in the longest run; the others hold 10, a fiftieth and a fifth of it.
    pub longest_messages: usize,
    /// Entries in the journal of the journal run (a 10-message run besides).
    pub journal_entries: usize,
    /// Calls of each operation per run, split into rotating rounds.
    pub reads: usize,
}

/// Message counts from 10 up to `longest`: 10, 2,000, 20,000 and 100,000 by default.
pub fn message_lengths(longest: usize) -> Vec<usize> {
    let mut lengths = vec![BASELINE_MESSAGES, longest / 50, longest / 5, longest];
    // Nothing shorter than the baseline: every ratio is taken against it.
    lengths.retain(|&length| length >= BASELINE_MESSAGES);
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

/// One run's shape: its message log and the journal entries before its final step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunShape {
    pub messages: usize,
    pub journal: usize,
}

/// One store, one run shape.
#[derive(Clone, Debug)]
pub struct HeldPrefixResult {
    pub store: &'static str,
    pub shape: RunShape,
    pub load_latest: Summary,
    pub load_at_step: Summary,
    pub resume: Summary,
}

/// A run written as an agent with a long history would have, but in few calls: Saves of up to
/// 10,000 messages each, the bulk journal in batches of 1,000 at the step before last, then a
/// last step with `FINAL_RESULTS` results and a Save covering everything. Returns that step.
async fn populate(
    client: &mut CheckpointServiceClient<Channel>,
    run_id: &str,
    shape: RunShape,
) -> Result<i64, BoxError> {
    let state = agent_state(STATE_BYTES, 7);
    let mut step = 0i64;
    let mut written = 0usize;
    while written < shape.messages {
        let count = (shape.messages - written).min(MESSAGES_PER_SAVE);
        step += 1;
        let messages = (written..written + count)
            .map(|index| Message {
                role: if index % 2 == 0 { "user" } else { "assistant" }.to_owned(),
                content: agent_state(MESSAGE_BYTES, index as u64),
            })
            .collect();
        client
            .save(SaveRequest {
                messages,
                message_offset: written as u64,
                ..state_save(run_id, step, state.clone())
            })
            .await?;
        written += count;
    }
    let mut recorded = 0usize;
    while recorded < shape.journal {
        let count = (shape.journal - recorded).min(RESULTS_PER_BATCH);
        let results = (recorded..recorded + count)
            .map(|index| tool_result(&format!("bulk-{index}"), step))
            .collect();
        record(client, run_id, results).await?;
        recorded += count;
    }
    step += 1;
    let last = (0..FINAL_RESULTS)
        .map(|index| tool_result(&format!("final-{index}"), step))
        .collect();
    record(client, run_id, last).await?;
    client
        .save(SaveRequest {
            message_offset: shape.messages as u64,
            ..state_save(run_id, step, state)
        })
        .await?;
    Ok(step)
}

fn tool_result(call_id: &str, step: i64) -> ToolResultInput {
    ToolResultInput {
        call_id: call_id.to_owned(),
        tool_name: "search".to_owned(),
        step,
        output: agent_state(OUTPUT_BYTES, step as u64),
        is_error: false,
        arguments_digest: String::new(),
    }
}

async fn record(
    client: &mut CheckpointServiceClient<Channel>,
    run_id: &str,
    results: Vec<ToolResultInput>,
) -> Result<(), BoxError> {
    client
        .record_tool_results(RecordToolResultsRequest {
            run_id: run_id.to_owned(),
            results,
            ..RecordToolResultsRequest::default()
        })
        .await?;
    Ok(())
}

/// The run shapes measured: each message length with no bulk journal, then the journal run.
pub fn shapes(effort: HeldPrefixEffort) -> Vec<RunShape> {
    let mut shapes: Vec<RunShape> = message_lengths(effort.longest_messages)
        .into_iter()
        .map(|messages| RunShape {
            messages,
            journal: 0,
        })
        .collect();
    if effort.journal_entries > 0 {
        shapes.push(RunShape {
            messages: BASELINE_MESSAGES,
            journal: effort.journal_entries,
        });
    }
    shapes
}

/// Measures every shape against the server at `addr`, labelled `store`.
pub async fn measure(
    store: &'static str,
    addr: SocketAddr,
    effort: HeldPrefixEffort,
) -> Result<Vec<HeldPrefixResult>, BoxError> {
    let mut client = checkpoint_client(addr).await?;
    let prefix = format!("bench-held-{store}-{}", std::process::id());
    let shapes = shapes(effort);
    let mut runs = Vec::new();
    for shape in &shapes {
        let run_id = format!("{prefix}-{}-{}", shape.messages, shape.journal);
        let started = Instant::now();
        let last_step = populate(&mut client, &run_id, *shape).await?;
        eprintln!(
            "bench: history: {store} run of {} messages, {} journal entries written in {:.1?}",
            shape.messages,
            shape.journal + FINAL_RESULTS,
            started.elapsed()
        );
        runs.push((run_id, last_step));
    }
    // Each call is checked once unrecorded (connections, statement caches) before measuring.
    for ((run_id, last_step), shape) in runs.iter().zip(&shapes) {
        let mut target = Target {
            client: &mut client,
            run_id,
            last_step: *last_step,
            shape: *shape,
        };
        target.load_latest().await?;
        target.load_at_step().await?;
        target.resume().await?;
    }
    let mut samples =
        vec![[Samples::default(), Samples::default(), Samples::default()]; runs.len()];
    let rounds = effort.reads.clamp(1, 5);
    let per_round = effort.reads.div_ceil(rounds).max(1);
    for round in 0..rounds {
        // Rotate the order so no run always goes first (cold) or last.
        for offset in 0..runs.len() {
            let index = (round + offset) % runs.len();
            let (run_id, last_step) = &runs[index];
            let mut target = Target {
                client: &mut client,
                run_id,
                last_step: *last_step,
                shape: shapes[index],
            };
            for (op, sample) in samples[index].iter_mut().enumerate() {
                let started = Instant::now();
                let mut latencies = Vec::with_capacity(per_round);
                for _ in 0..per_round {
                    latencies.push(match op {
                        0 => target.load_latest().await?,
                        1 => target.load_at_step().await?,
                        _ => target.resume().await?,
                    });
                }
                sample.add_batch(&latencies, started.elapsed());
            }
        }
    }
    Ok(shapes
        .iter()
        .zip(&samples)
        .map(
            |(shape, [load_latest, load_at_step, resume])| HeldPrefixResult {
                store,
                shape: *shape,
                load_latest: load_latest.summary(),
                load_at_step: load_at_step.summary(),
                resume: resume.summary(),
            },
        )
        .collect())
}

/// One populated run and the calls measured on it, each asking only for what the client lacks.
struct Target<'a> {
    client: &'a mut CheckpointServiceClient<Channel>,
    run_id: &'a str,
    last_step: i64,
    shape: RunShape,
}

fn capabilities() -> Vec<i32> {
    vec![ClientCapability::PagedMessages as i32]
}

impl Target<'_> {
    /// Checks an answer: the last step, no messages but the whole log counted, and the
    /// journal entries expected.
    fn check(
        &self,
        call: &str,
        checkpoint: Option<Checkpoint>,
        results: usize,
        expected_results: usize,
    ) -> Result<(), BoxError> {
        let checkpoint = checkpoint.ok_or_else(|| format!("{call} returned no checkpoint"))?;
        let (step, messages, count) = (
            checkpoint.step,
            checkpoint.messages.len(),
            checkpoint.message_count,
        );
        if step != self.last_step
            || messages != 0
            || count != self.shape.messages as u64
            || results != expected_results
        {
            return Err(format!(
                "{call} of {} answered step {step} with {messages} of {count} messages and {results} results",
                self.run_id
            )
            .into());
        }
        Ok(())
    }

    async fn load_latest(&mut self) -> Result<Duration, BoxError> {
        let request = LoadLatestRequest {
            run_id: self.run_id.to_owned(),
            message_offset: self.shape.messages as u64,
            journal: JournalScope::Step as i32,
            capabilities: capabilities(),
        };
        let started = Instant::now();
        let answer = self.client.load_latest(request).await?.into_inner();
        let elapsed = started.elapsed();
        let results = answer.tool_results.len();
        self.check("LoadLatest", answer.checkpoint, results, FINAL_RESULTS)?;
        Ok(elapsed)
    }

    async fn load_at_step(&mut self) -> Result<Duration, BoxError> {
        let request = LoadAtStepRequest {
            run_id: self.run_id.to_owned(),
            step: self.last_step,
            message_offset: self.shape.messages as u64,
            journal: JournalScope::Step as i32,
            capabilities: capabilities(),
            ..LoadAtStepRequest::default()
        };
        let started = Instant::now();
        let answer = self.client.load_at_step(request).await?.into_inner();
        let elapsed = started.elapsed();
        let results = answer.tool_results.len();
        self.check("LoadAtStep", answer.checkpoint, results, FINAL_RESULTS)?;
        Ok(elapsed)
    }

    /// Resume has no journal scope: it returns the whole journal by contract.
    async fn resume(&mut self) -> Result<Duration, BoxError> {
        let request = ResumeRequest {
            run_id: self.run_id.to_owned(),
            message_offset: self.shape.messages as u64,
            require_existing: true,
            capabilities: capabilities(),
        };
        let started = Instant::now();
        let answer = self.client.resume(request).await?.into_inner();
        let elapsed = started.elapsed();
        let results = answer.tool_results.len();
        let expected = self.shape.journal + FINAL_RESULTS;
        self.check("Resume", answer.checkpoint, results, expected)?;
        Ok(elapsed)
    }
}

pub fn print(results: &[HeldPrefixResult], effort: HeldPrefixEffort, targets: &mut Targets) {
    println!();
    println!(
        "== History with the prefix held: loads asking only for what follows the log, 1 client =="
    );
    println!(
        "(message_offset = the log's length, JOURNAL_SCOPE_STEP on the loads; {} B messages, 1 KB state, {FINAL_RESULTS} results at the last step; {} calls of each per run in rotating rounds)",
        MESSAGE_BYTES, effort.reads
    );
    println!(
        "{:<9} {:>8} {:>8} {:>9} {:>7} {:>9} {:>7} {:>9} {:>7}",
        "store", "messages", "journal", "latest", "x", "at step", "x", "resume", "x"
    );
    let lengths = message_lengths(effort.longest_messages);
    // The target judges the two longest runs (20,000 and 100,000 by default).
    let judged: Vec<usize> = lengths
        .iter()
        .rev()
        .take(2)
        .copied()
        .filter(|&n| n > BASELINE_MESSAGES)
        .collect();
    for result in results {
        let Some(base) = results.iter().find(|r| {
            r.store == result.store
                && r.shape
                    == RunShape {
                        messages: BASELINE_MESSAGES,
                        journal: 0,
                    }
        }) else {
            continue;
        };
        let x = |pick: fn(&HeldPrefixResult) -> Summary| {
            ratio(ms(pick(result).p50), ms(pick(base).p50))
        };
        let (latest, at_step, resume) =
            (x(|r| r.load_latest), x(|r| r.load_at_step), x(|r| r.resume));
        println!(
            "{:<9} {:>8} {:>8} {:>9.3} {:>6.2}x {:>9.3} {:>6.2}x {:>9.3} {:>6.2}x",
            result.store,
            result.shape.messages,
            result.shape.journal + FINAL_RESULTS,
            ms(result.load_latest.p50),
            latest,
            ms(result.load_at_step.p50),
            at_step,
            ms(result.resume.p50),
            resume
        );
        if result.shape.journal > 0 {
            let label =
                |op: &str| format!("{} {op} {} entries", result.store, result.shape.journal);
            targets.record(Row::JournalStep, label("LoadLatest"), latest);
            targets.record(Row::JournalStep, label("LoadAtStep"), at_step);
        } else if judged.contains(&result.shape.messages) {
            let label = |op: &str| format!("{} {op} {}", result.store, result.shape.messages);
            targets.record(Row::HistoryHeld, label("LoadLatest"), latest);
            targets.record(Row::HistoryHeld, label("LoadAtStep"), at_step);
            targets.record(Row::HistoryHeld, label("Resume"), resume);
        }
    }
    println!(
        "(p50 in ms; x = against the {BASELINE_MESSAGES}-message run of the same store; target <= {:.1}x for the two longest runs, and for the loads of the journal run; \
         Resume returns the whole journal by contract, so its journal-run ratio is shown, not judged)",
        Row::HistoryHeld.bound().limit()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::InProcessServer;
    use checkpointd_storage::store::StoreOptions;

    /// Runs longer than one Save's messages and one batch's results, every answer checked
    /// (step, no messages, the whole log counted, the journal entries expected).
    #[tokio::test]
    async fn every_run_is_written_in_batches_and_loaded_with_the_prefix_held() {
        let server = InProcessServer::start("memory://", &StoreOptions::default())
            .await
            .unwrap();
        let effort = HeldPrefixEffort {
            longest_messages: MESSAGES_PER_SAVE + 500,
            journal_entries: RESULTS_PER_BATCH + 200,
            reads: 2,
        };
        let results = measure("memory", server.addr, effort).await.unwrap();
        let shapes: Vec<RunShape> = results.iter().map(|r| r.shape).collect();
        assert_eq!(shapes, super::shapes(effort));
        assert_eq!(shapes.len(), 5);
        for result in &results {
            for summary in [result.load_latest, result.load_at_step, result.resume] {
                assert_eq!(summary.ops, 2, "{result:?}");
            }
        }
        let mut targets = Targets::default();
        print(&results, effort, &mut targets);
        // The two longest runs, three calls each, one store; the journal run's two loads.
        assert_eq!(targets.verdict(Row::HistoryHeld).unwrap().all.len(), 6);
        assert_eq!(targets.verdict(Row::JournalStep).unwrap().all.len(), 2);
        server.stop().await.unwrap();
    }

    #[test]
    fn message_lengths_run_from_ten_to_the_longest() {
        assert_eq!(message_lengths(100_000), vec![10, 2000, 20_000, 100_000]);
        assert_eq!(message_lengths(2000), vec![10, 40, 400, 2000]);
        assert_eq!(message_lengths(10), vec![10]);
    }

    #[test]
    fn the_journal_run_holds_the_baseline_messages_and_the_bulk_journal() {
        let effort = HeldPrefixEffort {
            longest_messages: 1000,
            journal_entries: 500,
            reads: 1,
        };
        let shapes = shapes(effort);
        assert_eq!(shapes.len(), 5);
        assert_eq!(
            shapes.last(),
            Some(&RunShape {
                messages: BASELINE_MESSAGES,
                journal: 500
            })
        );
    }
}
