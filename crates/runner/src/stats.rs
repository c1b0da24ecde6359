//! Per-save latency summaries printed at the end of a run.

use std::time::Duration;

use crate::session::RunStats;

/// The value at quantile `q` of sorted samples.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// One line: `summary saves=N p50_us=.. p95_us=.. p99_us=.. mean_bytes=.. max_bytes=..
/// total_bytes=.. tools_executed=.. tools_replayed=..`, easy for people and scripts to read.
pub fn summary_line(stats: &RunStats) -> String {
    let mut latencies = stats.save_latencies.clone();
    latencies.sort();
    let mean_bytes = if stats.save_bytes.is_empty() {
        0
    } else {
        stats.save_bytes.iter().sum::<usize>() / stats.save_bytes.len()
    };
    format!(
        "summary saves={} p50_us={} p95_us={} p99_us={} mean_bytes={} max_bytes={} total_bytes={} tools_executed={} tools_replayed={}",
        latencies.len(),
        quantile(&latencies, 0.50).as_micros(),
        quantile(&latencies, 0.95).as_micros(),
        quantile(&latencies, 0.99).as_micros(),
        mean_bytes,
        stats.save_bytes.iter().max().copied().unwrap_or(0),
        stats.save_bytes.iter().sum::<usize>(),
        stats.tools_executed,
        stats.tools_replayed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_pick_from_sorted_samples() {
        let samples: Vec<_> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantile(&samples, 0.5), Duration::from_millis(51));
        assert_eq!(quantile(&samples, 0.99), Duration::from_millis(99));
        assert_eq!(quantile(&[], 0.5), Duration::ZERO);
    }
}
