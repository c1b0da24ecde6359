//! Issue 20's performance targets: each scenario records the ratios it measured against the
//! target row they belong to, and the run ends with one line per row: the worst value measured,
//! the target, met or missed, and every value behind it.

use super::Scenario;

/// Which side of the target a ratio must stay on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

impl Bound {
    /// Whether `value` meets the bound; a missing value (NaN) never does.
    pub fn met_by(self, value: f64) -> bool {
        match self {
            Bound::AtMost(limit) => value <= limit,
            Bound::AtLeast(limit) => value >= limit,
        }
    }

    /// The ratio on the edge of the target.
    pub fn limit(self) -> f64 {
        match self {
            Bound::AtMost(limit) | Bound::AtLeast(limit) => limit,
        }
    }

    /// Whether `a` is further from meeting the bound than `b` (NaN is the worst of all).
    fn worse(self, a: f64, b: f64) -> bool {
        if a.is_nan() {
            return !b.is_nan();
        }
        match self {
            Bound::AtMost(_) => a > b,
            Bound::AtLeast(_) => a < b,
        }
    }

    pub fn label(self) -> String {
        match self {
            Bound::AtMost(limit) => format!("<= {limit}x"),
            Bound::AtLeast(limit) => format!(">= {limit}x"),
        }
    }
}

/// A row of the target table (and the journal row of its Build section).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    HistoryHeld,
    SaveFloor,
    LoadFloor,
    SaveThroughput,
    LoadThroughput,
    Identity,
    CacheHit,
    Tracing,
    JournalStep,
}

impl Row {
    /// In the order of the table; the journal row, from its Build section, last.
    pub const ALL: [Row; 9] = [
        Row::HistoryHeld,
        Row::SaveFloor,
        Row::LoadFloor,
        Row::SaveThroughput,
        Row::LoadThroughput,
        Row::Identity,
        Row::CacheHit,
        Row::Tracing,
        Row::JournalStep,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Row::HistoryHeld => "LoadLatest/LoadAtStep/Resume, prefix held, longest two vs 10 msgs",
            Row::SaveFloor => "Save p50 / floor, 1 KB and 10 KB, 1 client",
            Row::LoadFloor => "LoadLatest p50 / floor, 1 KB and 10 KB, 1 client",
            Row::SaveThroughput => "Save ops/s / raw INSERT ops/s, 32 clients, 1 KB",
            Row::LoadThroughput => "LoadLatest ops/s / raw SELECT ops/s, 32 clients, 1 KB",
            Row::Identity => "Save and GetRun p50, --auth api-key / none",
            Row::CacheHit => "Redis cache hit / Postgres LoadLatest p50, 10 KB, 100 KB",
            Row::Tracing => "Save p50, tracing on / off, memory and Postgres",
            Row::JournalStep => "loads, JOURNAL_SCOPE_STEP, 10,000-entry journal vs 10",
        }
    }

    pub fn bound(self) -> Bound {
        match self {
            Row::HistoryHeld | Row::JournalStep => Bound::AtMost(1.2),
            Row::SaveFloor | Row::LoadFloor => Bound::AtMost(1.15),
            Row::SaveThroughput => Bound::AtLeast(0.85),
            Row::LoadThroughput => Bound::AtLeast(0.6),
            Row::Identity => Bound::AtMost(1.03),
            Row::CacheHit => Bound::AtMost(0.6),
            Row::Tracing => Bound::AtMost(1.05),
        }
    }

    /// The scenario that measures this row.
    fn scenario(self) -> Scenario {
        match self {
            Row::HistoryHeld | Row::JournalStep => Scenario::History,
            Row::SaveFloor | Row::LoadFloor | Row::SaveThroughput | Row::LoadThroughput => {
                Scenario::Core
            }
            Row::Identity => Scenario::Identity,
            Row::CacheHit => Scenario::Cache,
            Row::Tracing => Scenario::Tracing,
        }
    }
}

/// One measured ratio: which row, what exactly (store, size, operation), and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub row: Row,
    pub label: String,
    pub value: f64,
}

/// Every ratio measured in this run against a target row.
#[derive(Debug, Default)]
pub struct Targets {
    measured: Vec<Measured>,
}

/// What one row came to.
#[derive(Debug, PartialEq)]
pub struct Verdict<'a> {
    pub worst: &'a Measured,
    pub met: bool,
    pub all: Vec<&'a Measured>,
}

impl Targets {
    pub fn record(&mut self, row: Row, label: impl Into<String>, value: f64) {
        self.measured.push(Measured {
            row,
            label: label.into(),
            value,
        });
    }

    /// The worst value of `row` and whether every value meets its bound; `None` when the
    /// row was not measured in this run.
    pub fn verdict(&self, row: Row) -> Option<Verdict<'_>> {
        let all: Vec<&Measured> = self.measured.iter().filter(|m| m.row == row).collect();
        let bound = row.bound();
        let worst = all.iter().copied().reduce(|worst, m| {
            if bound.worse(m.value, worst.value) {
                m
            } else {
                worst
            }
        })?;
        let met = all.iter().all(|m| bound.met_by(m.value));
        Some(Verdict { worst, met, all })
    }

    /// One line per target row: worst value, target, met or missed, then every value.
    pub fn print(&self) {
        println!();
        println!(
            "== Issue 20 targets: one line per row of its table, ratios measured in this run =="
        );
        println!(
            "{:<68} {:>8} {:>9} {:>7}  values",
            "measure", "worst", "target", "result"
        );
        for row in Row::ALL {
            let target = row.bound().label();
            match self.verdict(row) {
                None => println!(
                    "{:<68} {:>8} {target:>9} {:>7}  (run --scenarios {})",
                    row.title(),
                    "-",
                    "-",
                    format!("{:?}", row.scenario()).to_lowercase()
                ),
                Some(verdict) => println!(
                    "{:<68} {:>8} {target:>9} {:>7}  {}",
                    row.title(),
                    times(verdict.worst.value),
                    if verdict.met { "met" } else { "MISSED" },
                    verdict
                        .all
                        .iter()
                        .map(|m| format!("{} {}", m.label, times(m.value)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        println!(
            "(the exit code is 0 either way; each row's tables above show what the ratios are made of)"
        );
    }
}

fn times(value: f64) -> String {
    if value.is_nan() {
        "-".to_owned()
    } else {
        format!("{value:.2}x")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_met_only_when_every_value_meets_its_bound() {
        let mut targets = Targets::default();
        targets.record(Row::SaveFloor, "postgres 1 KB", 1.10);
        targets.record(Row::SaveFloor, "sqlite 1 KB", 1.40);
        targets.record(Row::SaveFloor, "postgres 10 KB", 1.05);
        let verdict = targets.verdict(Row::SaveFloor).unwrap();
        assert!(!verdict.met);
        assert_eq!(verdict.worst.label, "sqlite 1 KB");
        assert_eq!(verdict.all.len(), 3);

        targets.record(Row::Tracing, "memory", 1.01);
        assert!(targets.verdict(Row::Tracing).unwrap().met);
        assert!(targets.verdict(Row::Identity).is_none());
    }

    #[test]
    fn a_lower_bound_takes_the_smallest_value_as_the_worst() {
        let mut targets = Targets::default();
        targets.record(Row::SaveThroughput, "postgres", 0.90);
        targets.record(Row::SaveThroughput, "other", 0.70);
        let verdict = targets.verdict(Row::SaveThroughput).unwrap();
        assert_eq!(verdict.worst.label, "other");
        assert!(!verdict.met);
    }

    #[test]
    fn a_missing_value_is_the_worst_and_never_meets_the_target() {
        let mut targets = Targets::default();
        targets.record(Row::CacheHit, "10 KB", 0.5);
        targets.record(Row::CacheHit, "100 KB", f64::NAN);
        let verdict = targets.verdict(Row::CacheHit).unwrap();
        assert!(verdict.worst.value.is_nan());
        assert!(!verdict.met);
    }
}
