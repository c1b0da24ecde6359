//! What a chaos run does: how many tasks of how many steps, how many workers, how often and how
//! many times a worker is killed, all drawn from one seed so a failing run can be replayed.

use std::ops::RangeInclusive;
use std::time::Duration;

use crate::support::Backend;

/// Everything a chaos run is parameterised by.
#[derive(Clone, Debug)]
pub struct ChaosPlan {
    /// `Sqlite` or `Postgres`: the real `checkpointd serve` runs on it.
    pub backend: Backend,
    /// Demo tasks enqueued before the first worker starts.
    pub tasks: usize,
    /// Steps of each task, drawn per task from this range.
    pub steps: RangeInclusive<u64>,
    /// Worker processes alive at any time (a killed one is replaced at once).
    pub workers: usize,
    /// `--concurrency` of each worker.
    pub concurrency: usize,
    /// `--step-delay` of the demo agent: the simulated model latency.
    pub step_delay: Duration,
    /// Pause before each kill, drawn from this range, in milliseconds.
    pub kill_every_ms: RangeInclusive<u64>,
    /// The killer stops after this many kills...
    pub max_kills: usize,
    /// ...or after this long, or once every task has settled, whichever comes first.
    pub kill_window: Duration,
    /// How long the surviving workers get to settle every task once the killing stopped.
    pub settle_limit: Duration,
    /// Seeds the task lengths, the kill delays and the choice of victims.
    pub seed: u64,
    /// `--in-doubt POLICY` for the workers, when set (the demo's default otherwise).
    pub in_doubt_policy: Option<String>,
    /// Report duplicate emails without failing: only to show that the harness sees them.
    pub duplicates_tolerated: bool,
}

impl ChaosPlan {
    /// The CI run: small enough for two busy cores, still a dozen kills mid-step.
    pub fn short(backend: Backend) -> Self {
        Self {
            backend,
            tasks: 8,
            steps: 40..=60,
            workers: 3,
            concurrency: 3,
            step_delay: Duration::from_millis(30),
            kill_every_ms: 300..=800,
            max_kills: 12,
            kill_window: Duration::from_secs(15),
            settle_limit: Duration::from_secs(60),
            seed: 13,
            in_doubt_policy: None,
            duplicates_tolerated: false,
        }
    }

    /// The long run: the measurement of issue 13 (50 tasks of 100–150 steps, 3 workers), killed
    /// often enough to pass a hundred kills; every knob can be overridden from the environment.
    pub fn long_from_env() -> Self {
        let backend = match knob("CHAOS_BACKEND").as_deref() {
            None | Some("postgres") => Backend::Postgres,
            Some("sqlite") => Backend::Sqlite,
            Some(other) => panic!("CHAOS_BACKEND is sqlite or postgres, not {other:?}"),
        };
        let seconds = number("CHAOS_SECONDS", 300);
        Self {
            backend,
            tasks: number("CHAOS_TASKS", 50) as usize,
            steps: range("CHAOS_STEPS", 100..=150),
            workers: number("CHAOS_WORKERS", 3) as usize,
            concurrency: number("CHAOS_CONCURRENCY", 4) as usize,
            step_delay: Duration::from_millis(number("CHAOS_STEP_DELAY_MS", 50)),
            kill_every_ms: range("CHAOS_KILL_EVERY_MS", 400..=1200),
            max_kills: number("CHAOS_KILLS", 120) as usize,
            kill_window: Duration::from_secs(seconds),
            settle_limit: Duration::from_secs(seconds.max(120)),
            seed: knob("CHAOS_SEED")
                .map_or_else(seed_from_clock, |seed| parse("CHAOS_SEED", &seed)),
            in_doubt_policy: knob("CHAOS_IN_DOUBT"),
            duplicates_tolerated: knob("CHAOS_EXPECT_DUPLICATES_OK").as_deref() == Some("1"),
        }
    }

    /// The run id and step count of each task, in enqueue order.
    pub fn runs(&self) -> Vec<(String, u64)> {
        let mut draws = SplitMix::new(self.seed);
        (0..self.tasks)
            .map(|i| (format!("chaos-{i}"), draws.within(&self.steps)))
            .collect()
    }
}

/// The spool lines of every email the demo agent sends in a run of `steps` steps: one on every
/// step that is not a multiple of 3.
pub fn email_lines(run_id: &str, steps: u64) -> impl Iterator<Item = String> + '_ {
    (1..=steps)
        .filter(|step| !step.is_multiple_of(3))
        .map(move |step| format!("{run_id} step-{step}/send_email"))
}

/// A splitmix64 sequence: reproducible draws for a seed, no dependency needed.
pub struct SplitMix {
    state: u64,
}

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw in `range`, both ends included.
    pub fn within(&mut self, range: &RangeInclusive<u64>) -> u64 {
        let span = range.end() - range.start() + 1;
        range.start() + self.next() % span
    }

    /// A draw in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn knob(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

fn parse<T: std::str::FromStr>(name: &str, value: &str) -> T {
    value
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{name}={value:?} is not a number"))
}

fn number(name: &str, default: u64) -> u64 {
    knob(name).map_or(default, |value| parse(name, &value))
}

/// `LOW-HIGH` (or one number for both ends).
fn range(name: &str, default: RangeInclusive<u64>) -> RangeInclusive<u64> {
    let Some(value) = knob(name) else {
        return default;
    };
    let (low, high) = value.split_once('-').unwrap_or((&value, &value));
    let (low, high): (u64, u64) = (parse(name, low), parse(name, high));
    assert!(low <= high, "{name}={value:?}: the low end comes first");
    low..=high
}

/// A fresh seed per long run unless CHAOS_SEED pins one; the summary prints it for a replay.
fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |since| since.as_nanos() as u64)
}
