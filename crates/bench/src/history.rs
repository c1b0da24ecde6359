//! History length: LoadLatest and Resume on runs holding 10, 1,000 and 10,000 checkpoints.
//! Reads restore the latest checkpoint only, so their cost should not grow with the history.
//! The checkpoints carry state only: a run's message log is restored by design, and would
//! measure the conversation, not the number of checkpoints.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tonic::transport::Channel;

use super::BoxError;
use super::clients::checkpoint_client;
use super::payload::agent_state;
use super::scenario::Effort;
use super::stats::{Samples, Summary, against_first, ms, ratio};
use checkpointd_protocol::v1::checkpoint_service_client::CheckpointServiceClient;
use checkpointd_protocol::v1::{LoadLatestRequest, ResumeRequest, SaveRequest};

/// The target: the longest history within 1.2x of the shortest.
pub const TARGET_RATIO: f64 = 1.2;
const STATE_BYTES: usize = 1024;

/// One store, one history length.
#[derive(Clone, Debug)]
pub struct HistoryResult {
    pub store: &'static str,
    pub checkpoints: usize,
    pub load_latest: Summary,
    pub resume: Summary,
}

/// A Save of `state` alone at `step` of `run_id`, as JSON.
pub fn state_save(run_id: &str, step: i64, state: Vec<u8>) -> SaveRequest {
    SaveRequest {
        run_id: run_id.to_owned(),
        step,
        content_type: "application/json".to_owned(),
        state,
        ..SaveRequest::default()
    }
}

/// Writes `checkpoints` steps to `run_id`, one Save each, as an agent would have.
async fn populate(
    client: &mut CheckpointServiceClient<Channel>,
    run_id: &str,
    checkpoints: usize,
) -> Result<(), BoxError> {
    let state = agent_state(STATE_BYTES, 5);
    for step in 1..=checkpoints as i64 {
        client.save(state_save(run_id, step, state.clone())).await?;
    }
    Ok(())
}

/// Measures every length in `lengths` against the server at `addr`, labelled `store`.
pub async fn measure(
    store: &'static str,
    addr: SocketAddr,
    lengths: &[usize],
    effort: Effort,
) -> Result<Vec<HistoryResult>, BoxError> {
    let mut client = checkpoint_client(addr).await?;
    let prefix = format!("bench-history-{store}-{}", std::process::id());
    for &length in lengths {
        eprintln!("bench: history: writing {length} checkpoints on {store}");
        populate(&mut client, &format!("{prefix}-{length}"), length).await?;
    }
    let mut loads = vec![Samples::default(); lengths.len()];
    let mut resumes = vec![Samples::default(); lengths.len()];
    let rounds = effort.rounds * 3;
    let per_round = effort.iterations.div_ceil(rounds).max(1);
    for round in 0..rounds {
        // Rotate the order so no length always runs first (cold) or last.
        for offset in 0..lengths.len() {
            let index = (round + offset) % lengths.len();
            let run_id = format!("{prefix}-{}", lengths[index]);
            let (load, resume) =
                time_reads(&mut client, &run_id, lengths[index], per_round).await?;
            loads[index].add_batch(&load.0, load.1);
            resumes[index].add_batch(&resume.0, resume.1);
        }
    }
    Ok(lengths
        .iter()
        .enumerate()
        .map(|(index, &checkpoints)| HistoryResult {
            store,
            checkpoints,
            load_latest: loads[index].summary(),
            resume: resumes[index].summary(),
        })
        .collect())
}

type Timed = (Vec<Duration>, Duration);

/// `count` LoadLatest calls then `count` Resume calls, each checked to restore the last step.
async fn time_reads(
    client: &mut CheckpointServiceClient<Channel>,
    run_id: &str,
    last_step: usize,
    count: usize,
) -> Result<(Timed, Timed), BoxError> {
    let started = Instant::now();
    let mut loads = Vec::with_capacity(count);
    for _ in 0..count {
        let request = LoadLatestRequest {
            run_id: run_id.to_owned(),
            ..Default::default()
        };
        let call = Instant::now();
        let restored = client.load_latest(request).await?.into_inner();
        loads.push(call.elapsed());
        let step = restored.checkpoint.map_or(0, |c| c.step);
        if step != last_step as i64 {
            return Err(format!("LoadLatest of {run_id} restored step {step}").into());
        }
    }
    let loads_wall = started.elapsed();
    let started = Instant::now();
    let mut resumes = Vec::with_capacity(count);
    for _ in 0..count {
        let request = ResumeRequest {
            run_id: run_id.to_owned(),
            ..Default::default()
        };
        let call = Instant::now();
        let resumed = client.resume(request).await?.into_inner();
        resumes.push(call.elapsed());
        if resumed.recovered_from_step != last_step as i64 {
            return Err(format!(
                "Resume of {run_id} recovered step {}",
                resumed.recovered_from_step
            )
            .into());
        }
    }
    Ok(((loads, loads_wall), (resumes, started.elapsed())))
}

pub fn print(results: &[HistoryResult], effort: Effort) {
    println!();
    println!(
        "== History length: LoadLatest and Resume against checkpoints in the run, 1 client =="
    );
    println!(
        "(one run per length, 1 KB state per checkpoint, no messages; {} calls of each per length, in {} rotating rounds)",
        effort.iterations,
        effort.rounds * 3
    );
    println!(
        "{:<10} {:>11} {:>10} {:>10} {:>8} {:>10} {:>10} {:>8}",
        "store",
        "checkpoints",
        "load p50",
        "load p99",
        "vs first",
        "resume p50",
        "resume p99",
        "vs first"
    );
    let mut verdicts = Vec::new();
    for (r, first, is_longest) in against_first(results, |r| r.store) {
        let load_ratio = ratio(ms(r.load_latest.p50), ms(first.load_latest.p50));
        let resume_ratio = ratio(ms(r.resume.p50), ms(first.resume.p50));
        println!(
            "{:<10} {:>11} {:>10.3} {:>10.3} {:>8.2} {:>10.3} {:>10.3} {:>8.2}",
            r.store,
            r.checkpoints,
            ms(r.load_latest.p50),
            ms(r.load_latest.p99),
            load_ratio,
            ms(r.resume.p50),
            ms(r.resume.p99),
            resume_ratio
        );
        if is_longest {
            let met = load_ratio <= TARGET_RATIO && resume_ratio <= TARGET_RATIO;
            verdicts.push(format!(
                "{}: {} checkpoints at {load_ratio:.2}x (LoadLatest) and {resume_ratio:.2}x (Resume) of {}: {}",
                r.store,
                r.checkpoints,
                first.checkpoints,
                if met { "met" } else { "MISSED" }
            ));
        }
    }
    println!(
        "(times in ms; target: the longest history within {TARGET_RATIO:.1}x of the shortest)"
    );
    for verdict in verdicts {
        println!("  {verdict}");
    }
}
