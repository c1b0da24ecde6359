//! One log line per cause per interval for failures that repeat on every request.
//!
//! While the database is down every request fails the same way; logging each one buried the
//! log (thousands of identical lines a second) without telling an operator anything more. The
//! first failure of a cause is logged at once, then at most once per interval, with the number
//! of failures left unlogged meanwhile. The Redis link throttles its outage warning the same way.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

/// How often one cause may be logged.
pub const LOG_INTERVAL: Duration = Duration::from_secs(30);

/// Distinct causes remembered at once; beyond it, new causes share one slot, so error texts
/// that embed values (ids, row contents) cannot grow the table.
const MAX_CAUSES: usize = 64;

/// The cause that unremembered causes share.
const OVERFLOW_CAUSE: &str = "other causes";

static SHARED: LazyLock<Throttle> = LazyLock::new(|| Throttle::new(LOG_INTERVAL));

/// Whether a failure of `kind` with `detail` is logged now; `Some(n)` means log it, noting the
/// `n` failures of the same cause left unlogged since the previous line.
pub fn admit(kind: &str, detail: &str, now: Instant) -> Option<u64> {
    SHARED.admit(&format!("{kind}: {detail}"), now)
}

/// What the shared table holds; separate so tests can drive their own clock.
pub struct Throttle {
    interval: Duration,
    causes: Mutex<HashMap<String, CauseLog>>,
}

struct CauseLog {
    logged_at: Instant,
    suppressed: u64,
}

impl Throttle {
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            causes: Mutex::new(HashMap::new()),
        }
    }

    pub fn admit(&self, cause: &str, now: Instant) -> Option<u64> {
        let mut causes = self
            .causes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !causes.contains_key(cause) && causes.len() >= MAX_CAUSES {
            let interval = self.interval;
            causes.retain(|_, log| now.saturating_duration_since(log.logged_at) < interval);
        }
        let key = if causes.contains_key(cause) || causes.len() < MAX_CAUSES {
            cause
        } else {
            OVERFLOW_CAUSE
        };
        match causes.get_mut(key) {
            None => {
                causes.insert(
                    key.to_owned(),
                    CauseLog {
                        logged_at: now,
                        suppressed: 0,
                    },
                );
                Some(0)
            }
            Some(log) if now.saturating_duration_since(log.logged_at) >= self.interval => {
                let suppressed = std::mem::take(&mut log.suppressed);
                log.logged_at = now;
                Some(suppressed)
            }
            Some(log) => {
                log.suppressed += 1;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_cause_is_logged_once_per_interval_with_the_count_it_left_out() {
        let throttle = Throttle::new(Duration::from_secs(30));
        let start = Instant::now();
        assert_eq!(throttle.admit("db down", start), Some(0));
        for second in 1..30 {
            let now = start + Duration::from_secs(second);
            assert_eq!(throttle.admit("db down", now), None);
        }
        assert_eq!(
            throttle.admit("db down", start + Duration::from_secs(30)),
            Some(29)
        );
        assert_eq!(
            throttle.admit("db down", start + Duration::from_secs(31)),
            None
        );
    }

    #[test]
    fn each_cause_has_its_own_interval() {
        let throttle = Throttle::new(Duration::from_secs(30));
        let now = Instant::now();
        assert_eq!(throttle.admit("pool timeout", now), Some(0));
        assert_eq!(throttle.admit("connection refused", now), Some(0));
        assert_eq!(throttle.admit("pool timeout", now), None);
    }

    #[test]
    fn causes_beyond_the_table_share_one_slot() {
        let throttle = Throttle::new(Duration::from_secs(30));
        let now = Instant::now();
        for n in 0..MAX_CAUSES {
            assert_eq!(throttle.admit(&format!("row {n}"), now), Some(0));
        }
        assert_eq!(throttle.admit("row 1000", now), Some(0));
        assert_eq!(throttle.admit("row 1001", now), None);
        // Once the remembered causes are older than the interval, they make room again.
        let later = now + Duration::from_secs(30);
        assert_eq!(throttle.admit("row 2000", later), Some(0));
    }
}
