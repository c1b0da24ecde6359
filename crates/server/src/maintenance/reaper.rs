//! The reaper: buries stale running tasks whose attempts are used up as dead letters, so that
//! a claim only ever claims (the river "rescuer", for tasks with no retry left).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use checkpointd_core::error::Result;
use checkpointd_storage::queue::TaskQueue;

/// Most tasks buried per transaction; a pass repeats batches until one comes back short.
pub const REAP_BATCH: usize = 500;

/// Moves exhausted stale tasks to `dead`, once or periodically inside the server.
#[derive(Clone)]
pub struct Reaper {
    queue: Arc<dyn TaskQueue>,
    /// Time between two background passes; zero turns the background reaper off.
    interval: Duration,
    batch: usize,
}

impl Reaper {
    pub fn new(queue: Arc<dyn TaskQueue>, interval: Duration) -> Self {
        Self {
            queue,
            interval,
            batch: REAP_BATCH,
        }
    }

    /// One pass: buries every task reapable at `now`, a batch per transaction; returns how many
    /// went. Stops between batches once `stop` is cancelled.
    pub async fn pass(&self, now: SystemTime, stop: &CancellationToken) -> Result<u64> {
        let mut reaped = 0;
        loop {
            let batch = self.queue.reap_exhausted(now, self.batch).await?;
            reaped += batch;
            if batch < self.batch as u64 || stop.is_cancelled() {
                return Ok(reaped);
            }
        }
    }

    /// Runs a pass every `interval` until `stop` is cancelled, each at the wall clock's time
    /// of its tick; a failed pass is logged and retried at the next tick.
    pub async fn run_periodically(self, stop: CancellationToken) {
        if self.interval.is_zero() {
            return;
        }
        let mut ticks = tokio::time::interval(self.interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            match self.pass(SystemTime::now(), &stop).await {
                Ok(0) => {}
                Ok(reaped) => tracing::info!(reaped, "stale tasks on their final attempt buried"),
                Err(error) => tracing::warn!(%error, "reap pass failed; retrying next interval"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::{RunId, Tenant};
    use checkpointd_storage::queue::{ClaimBatch, MemoryQueue, NewTask, RetryPolicy, TaskState};

    const LEASE: Duration = Duration::from_secs(30);

    fn one_attempt_task(run_id: &str) -> NewTask {
        NewTask {
            run_id: RunId::parse(run_id).unwrap(),
            input: Vec::new(),
            idempotency_key: None,
            retry_policy: RetryPolicy {
                max_attempts: 1,
                ..RetryPolicy::default()
            },
            auto_resume_hitl: true,
        }
    }

    /// `count` tasks on their only attempt, claimed with `lease`; returns when they were.
    async fn claimed_tasks(queue: &MemoryQueue, count: usize, lease: Duration) -> SystemTime {
        let tenant = Tenant::parse("default").unwrap();
        for n in 0..count {
            queue
                .enqueue(&tenant, one_attempt_task(&format!("run-{n}")))
                .await
                .unwrap();
        }
        let claimed_at = SystemTime::now();
        let claimed = queue
            .claim(&tenant, "w", lease, ClaimBatch::up_to(count), claimed_at)
            .await
            .unwrap();
        assert_eq!(claimed.len(), count);
        claimed_at
    }

    async fn states(queue: &MemoryQueue) -> Vec<(TaskState, u64)> {
        let mut depth = queue.depth().await.unwrap();
        depth.sort_by_key(|(state, _)| state.as_str());
        depth
    }

    #[tokio::test]
    async fn a_pass_buries_every_expired_lease_in_batches_and_nothing_before_expiry() {
        let queue = Arc::new(MemoryQueue::new());
        let claimed_at = claimed_tasks(&queue, 5, LEASE).await;
        let reaper = Reaper {
            batch: 2,
            ..Reaper::new(queue.clone(), Duration::ZERO)
        };
        let stop = CancellationToken::new();
        let before_expiry = claimed_at + LEASE - Duration::from_nanos(1);
        assert_eq!(reaper.pass(before_expiry, &stop).await.unwrap(), 0);
        assert_eq!(states(&queue).await, vec![(TaskState::Running, 5)]);

        assert_eq!(reaper.pass(claimed_at + LEASE, &stop).await.unwrap(), 5);
        assert_eq!(states(&queue).await, vec![(TaskState::Dead, 5)]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_background_reaper_buries_on_its_tick_and_stops_when_told() {
        let queue = Arc::new(MemoryQueue::new());
        // Leases that end as they begin, so expired by the wall clock the background pass
        // reads, which paused tokio time does not stop.
        claimed_tasks(&queue, 3, Duration::ZERO).await;
        let stop = CancellationToken::new();
        let reaper = tokio::spawn(
            Reaper::new(queue.clone(), Duration::from_secs(5)).run_periodically(stop.clone()),
        );
        // Paused time moves on by itself once every task waits, so the first ticks run here.
        tokio::time::sleep(Duration::from_secs(6)).await;
        assert_eq!(states(&queue).await, vec![(TaskState::Dead, 3)]);
        stop.cancel();
        reaper.await.unwrap();
    }

    #[tokio::test]
    async fn a_zero_interval_turns_the_background_reaper_off() {
        let queue = Arc::new(MemoryQueue::new());
        Reaper::new(queue, Duration::ZERO)
            .run_periodically(CancellationToken::new())
            .await;
    }
}
