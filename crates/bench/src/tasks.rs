//! The task-queue scenarios of the benchmark: claim-to-complete throughput and recovery
//! after a SIGKILL, each on fresh Postgres schemas, and their tables.

use super::clients::InProcessServer;
use super::queue::{self, QueueEffort, QueueResult};
use super::recovery::{self, Recovery, RecoveryEffort};
use super::report;
use super::server_process::CheckpointdBinary;
use super::stats::ms;
use super::{BoxError, Schemas};
use checkpointd::config::ServerSettings;
use checkpointd_storage::store::StoreOptions;

/// The recovery target: kill to resumption, beyond the lease itself, in milliseconds.
pub const RECOVERY_BUDGET_MS: f64 = 2000.0;

/// Every queue variant on its own server and fresh schema, measured side by side.
pub async fn run_queue(
    schemas: &Schemas<'_>,
    options: &StoreOptions,
    effort: QueueEffort,
) -> Result<Vec<QueueResult>, BoxError> {
    let mut servers = Vec::new();
    let mut lanes = Vec::new();
    for variant in queue::Variant::ALL {
        let url = schemas.create_url().await?;
        let server = InProcessServer::start(&url, options).await?;
        lanes.push((variant, server.url()));
        servers.push(server);
    }
    let results = queue::measure(&lanes, effort, &format!("bench-{}", std::process::id())).await;
    for server in servers {
        server.stop().await?;
    }
    results
}

/// Crashes and recoveries against one server, on a fresh schema, whose stale threshold is the
/// lease.
pub async fn run_recovery(
    schemas: &Schemas<'_>,
    binary: &CheckpointdBinary,
    options: &StoreOptions,
    effort: RecoveryEffort,
) -> Result<Vec<Recovery>, BoxError> {
    let url = schemas.create_url().await?;
    let settings = ServerSettings {
        stale_threshold: effort.lease,
        ..ServerSettings::default()
    };
    let server = InProcessServer::start_with(&url, options, settings).await?;
    let prefix = format!("bench-recovery-{}", std::process::id());
    let results = recovery::measure(binary, &server.url(), effort, &prefix).await;
    server.stop().await?;
    results
}

pub fn print_queue(results: &[QueueResult], effort: QueueEffort) {
    let workers = results.first().map_or(effort.workers, |r| r.workers);
    println!();
    println!("== Queue: claim to complete, {workers} workers, checkpointd postgres ==");
    println!(
        "({} tasks per variant, each variant on a fresh schema; enqueued then drained in {} interleaved round(s) of {}; each worker its own gRPC connection, Claim batch 1, lease {} s)",
        effort.total(),
        effort.rounds,
        effort.per_round(),
        queue::LEASE.as_secs()
    );
    println!(
        "{:<38} {:>6} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "variant",
        "tasks",
        "tasks/s",
        "task p50",
        "task p99",
        "claim p50",
        "step p50",
        "compl p50",
        "enqueue/s"
    );
    for r in results {
        println!(
            "{:<38} {:>6} {:>8.0} {:>9.3} {:>9.3} {:>9.3} {:>9} {:>9.3} {:>9.0}",
            r.variant.label(),
            r.task.ops,
            r.task.ops_per_sec,
            ms(r.task.p50),
            ms(r.task.p99),
            ms(r.claim.p50),
            r.step
                .map_or("-".to_owned(), |s| format!("{:.3}", ms(s.p50))),
            ms(r.complete.p50),
            r.enqueue_per_sec,
        );
    }
    println!(
        "(latencies in ms; a task runs from the start of its Claim to the end of its Complete; step = Resume + Save)"
    );
    for r in results {
        println!(
            "  {}: {}; p99 claim {:.3} ms, complete {:.3} ms{}; {} empty claim(s) at the tails",
            r.variant.label(),
            r.verified,
            ms(r.claim.p99),
            ms(r.complete.p99),
            r.step
                .map_or(String::new(), |s| format!(", step {:.3} ms", ms(s.p99))),
            r.empty_claims,
        );
    }
}

/// The median of some values; NaN for none.
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut sorted: Vec<f64> = values.into_iter().collect();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

pub fn print_recovery(runs: &[Recovery], effort: RecoveryEffort) {
    let lease = effort.lease.as_millis();
    println!();
    println!(
        "== Recovery: SIGKILLed worker process to resumption on another, lease {lease} ms, checkpointd postgres =="
    );
    println!(
        "(worker A: `checkpointd worker --lease {lease}ms --step-delay {}ms --strategy every_step`, SIGKILLed once it has checkpointed step 1 to 4;",
        effort.step_delay.as_millis()
    );
    println!(
        " worker B: started after the kill, `--lease {lease}ms --poll-interval {}ms --strategy every_step`, no step delay;",
        recovery::POLL_INTERVAL.as_millis()
    );
    println!(
        " detection = kill -> lease_expires_at stored on the task (last heartbeat + lease; heartbeats every third of it); claim = expiry -> B's claim;"
    );
    println!(
        " Resume = claim -> Resume answered; first step = Resume -> B's first checkpoint. Times in ms; workers stamp events to 1 ms)"
    );
    println!(
        "{:<7} {:>8} {:>8} {:>10} {:>8} {:>8} {:>10} {:>13} {:>15}",
        "run",
        "ckpt at",
        "resumed",
        "detection",
        "claim",
        "Resume",
        "first step",
        "kill->resumed",
        "kill->1st ckpt"
    );
    for (index, r) in runs.iter().enumerate() {
        println!(
            "{:<7} {:>8} {:>8} {:>10} {:>8.1} {:>8.1} {:>10.1} {:>13.1} {:>15.1}",
            index + 1,
            r.killed_after_step,
            r.recovered_from_step,
            format!(
                "{:.1}{}",
                r.detection(),
                if r.renewed_at_kill { "*" } else { "" }
            ),
            r.claim(),
            r.resume(),
            r.first_step(),
            r.to_resumed(),
            r.to_first_step(),
        );
    }
    let med = |pick: fn(&Recovery) -> f64| median(runs.iter().map(pick));
    println!(
        "{:<7} {:>8} {:>8} {:>10.1} {:>8.1} {:>8.1} {:>10.1} {:>13.1} {:>15.1}",
        "median",
        "",
        "",
        med(Recovery::detection),
        med(Recovery::claim),
        med(Recovery::resume),
        med(Recovery::first_step),
        med(Recovery::to_resumed),
        med(Recovery::to_first_step),
    );
    if runs.iter().any(|r| r.renewed_at_kill) {
        println!("(* a heartbeat sent just before the kill renewed the lease)");
    }
    let beyond = med(Recovery::to_resumed) - lease as f64;
    let worst = runs
        .iter()
        .map(|r| r.to_resumed() - lease as f64)
        .fold(f64::NAN, f64::max);
    println!(
        "  kill -> resumed beyond the {lease} ms lease: median {beyond:+.1} ms, worst {worst:+.1} ms; target < {RECOVERY_BUDGET_MS} ms  {}",
        report::verdict(worst < RECOVERY_BUDGET_MS)
    );
    println!(
        "  lease expiry -> resumed (claim + Resume): median {:.1} ms",
        med(|r| r.claim() + r.resume())
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median([]).is_nan());
    }

    /// Both variants drain their backlogs on the memory store, and every task completes once.
    #[tokio::test]
    async fn queue_variants_complete_every_task_once() {
        let mut servers = Vec::new();
        let mut lanes = Vec::new();
        for variant in queue::Variant::ALL {
            let server = InProcessServer::start("memory://", &StoreOptions::default())
                .await
                .unwrap();
            lanes.push((variant, server.url()));
            servers.push(server);
        }
        let effort = QueueEffort {
            tasks: 25,
            workers: 3,
            rounds: 2,
        };
        let results = queue::measure(&lanes, effort, "test").await.unwrap();
        assert_eq!(results.len(), 2);
        for r in &results {
            assert_eq!(r.task.ops, effort.total(), "{r:?}");
            assert_eq!(r.task.ops, 26);
            assert!(r.task.ops_per_sec > 0.0);
            assert!(r.task.p50 <= r.task.p99);
            assert!(r.verified.contains("exactly once"), "{}", r.verified);
        }
        assert!(results[0].step.is_none());
        assert!(results[1].step.is_some());
        for server in servers {
            server.stop().await.unwrap();
        }
    }
}
