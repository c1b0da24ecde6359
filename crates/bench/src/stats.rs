//! Latency samples and what is reported from them: percentiles and throughput.

use std::time::Duration;

/// Every latency and the wall time of every batch one contender ran in one measurement.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Samples {
    /// Adds one batch: its per-operation latencies and how long the whole batch took.
    pub fn add_batch(&mut self, latencies: &[Duration], wall: Duration) {
        self.latencies.extend_from_slice(latencies);
        self.wall += wall;
    }

    pub fn summary(&self) -> Summary {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let ops = sorted.len();
        Summary {
            ops,
            p50: percentile(&sorted, 50.0),
            p99: percentile(&sorted, 99.0),
            ops_per_sec: if self.wall.is_zero() {
                0.0
            } else {
                ops as f64 / self.wall.as_secs_f64()
            },
        }
    }
}

/// What one contender achieved in one measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub ops: usize,
    pub p50: Duration,
    pub p99: Duration,
    /// Operations over the summed wall time of the batches (all clients together).
    pub ops_per_sec: f64,
}

/// Nearest-rank percentile of sorted samples: the smallest sample that at least `p` percent of
/// the samples do not exceed. Zero for no samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Each row with the first row of its group (the baseline its ratios are taken against) and
/// whether it is the group's last row (where the verdict is read). Rows of a group are adjacent.
pub fn against_first<T>(rows: &[T], group: impl Fn(&T) -> &str) -> Vec<(&T, &T, bool)> {
    rows.iter()
        .enumerate()
        .map(|(index, row)| {
            let first = rows
                .iter()
                .find(|other| group(other) == group(row))
                .unwrap_or(row);
            let last = rows
                .get(index + 1)
                .is_none_or(|next| group(next) != group(row));
            (row, first, last)
        })
        .collect()
}

/// Milliseconds with three decimals, the unit every table uses.
pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// `a / b` as a ratio, NaN when `b` is zero so it prints as missing rather than infinite.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { f64::NAN } else { a / b }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|&v| Duration::from_millis(v)).collect()
    }

    #[test]
    fn percentile_uses_the_nearest_rank() {
        let sorted = millis(&(1..=100).collect::<Vec<_>>());
        assert_eq!(percentile(&sorted, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&sorted, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&sorted, 100.0), Duration::from_millis(100));
        assert_eq!(percentile(&millis(&[7]), 99.0), Duration::from_millis(7));
        assert_eq!(
            percentile(&millis(&[1, 2, 3]), 50.0),
            Duration::from_millis(2)
        );
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }

    #[test]
    fn summary_sorts_and_divides_by_the_summed_wall_time() {
        let mut samples = Samples::default();
        samples.add_batch(&millis(&[30, 10]), Duration::from_millis(500));
        samples.add_batch(&millis(&[20, 40]), Duration::from_millis(500));
        let summary = samples.summary();
        assert_eq!(summary.ops, 4);
        assert_eq!(summary.p50, Duration::from_millis(20));
        assert_eq!(summary.p99, Duration::from_millis(40));
        assert!((summary.ops_per_sec - 4.0).abs() < 1e-9);
    }

    #[test]
    fn each_row_is_paired_with_its_groups_first_and_the_last_is_marked() {
        let rows = [
            ("pg", 1),
            ("pg", 2),
            ("sqlite", 3),
            ("sqlite", 4),
            ("sqlite", 5),
        ];
        let paired: Vec<_> = against_first(&rows, |row| row.0)
            .into_iter()
            .map(|(row, first, last)| (row.1, first.1, last))
            .collect();
        assert_eq!(
            paired,
            vec![
                (1, 1, false),
                (2, 1, true),
                (3, 3, false),
                (4, 3, false),
                (5, 3, true)
            ]
        );
    }

    #[test]
    fn ratio_of_zero_is_missing_not_infinite() {
        assert!(ratio(1.0, 0.0).is_nan());
        assert!((ratio(3.0, 2.0) - 1.5).abs() < 1e-12);
    }
}
