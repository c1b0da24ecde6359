//! The worker processes of a chaos run and the seeded killer that SIGKILLs one of them at random
//! and starts its replacement at once.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use super::plan::{ChaosPlan, SplitMix};
use crate::support::WorkerProcess;

/// `checkpointd worker` processes that all run the same flags.
pub struct WorkerPool {
    server: SocketAddr,
    flags: Vec<String>,
    alive: Vec<WorkerProcess>,
    started: usize,
}

impl WorkerPool {
    /// Starts `plan.workers` workers on the demo agent, appending emails to `side_effect_file`.
    pub fn start(server: SocketAddr, plan: &ChaosPlan, side_effect_file: &Path) -> Self {
        let mut flags: Vec<String> = [
            "--lease",
            "1s",
            "--strategy",
            "every_n:3",
            "--concurrency",
            &plan.concurrency.to_string(),
            "--step-delay",
            &format!("{}ms", plan.step_delay.as_millis()),
            "--side-effect-file",
            side_effect_file.to_str().expect("a UTF-8 temp path"),
        ]
        .map(str::to_owned)
        .into();
        if let Some(policy) = &plan.in_doubt_policy {
            flags.extend(["--in-doubt".to_owned(), policy.clone()]);
        }
        let mut pool = Self {
            server,
            flags,
            alive: Vec::new(),
            started: 0,
        };
        for _ in 0..plan.workers {
            pool.spawn_one();
        }
        pool
    }

    fn spawn_one(&mut self) {
        let flags: Vec<&str> = self.flags.iter().map(String::as_str).collect();
        // A killed worker's lost leases make its successors log warnings by the hundred.
        let worker = WorkerProcess::start_with_env(self.server, &flags, &[("RUST_LOG", "error")]);
        self.alive.push(worker);
        self.started += 1;
    }

    /// SIGKILLs the worker at `index` (no shutdown code runs) and starts a replacement.
    fn kill_and_replace(&mut self, index: usize) {
        self.alive.swap_remove(index).kill9();
        self.spawn_one();
    }

    /// Worker processes started so far, replacements included.
    pub fn started(&self) -> usize {
        self.started
    }

    /// SIGTERM to every surviving worker; each drains and exits.
    pub fn stop(mut self) {
        for worker in &mut self.alive {
            worker.terminate();
        }
    }
}

/// Kills a random worker after a random pause, again and again, until `plan.max_kills` kills,
/// `plan.kill_window` of wall time, or `settled` says there is nothing left to interrupt.
/// Returns the number of kills.
pub async fn kill_at_random<F, Fut>(
    pool: &mut WorkerPool,
    plan: &ChaosPlan,
    draws: &mut SplitMix,
    mut settled: F,
) -> usize
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let began = Instant::now();
    let mut kills = 0;
    while kills < plan.max_kills && began.elapsed() < plan.kill_window {
        // The one place time is the point: when a kill lands is the chaos.
        let pause = Duration::from_millis(draws.within(&plan.kill_every_ms));
        tokio::time::sleep(pause).await;
        if settled().await {
            break;
        }
        let victim = draws.below(pool.alive.len());
        pool.kill_and_replace(victim);
        kills += 1;
    }
    kills
}
