//! Stored time: every backend keeps timestamps as whole microseconds since the Unix epoch (the
//! unit of Postgres's `timestamptz` and of SQLite's integer columns), so a time handed to a
//! client equals what a later read returns. The one conversion, written once.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Earliest and latest times stored: well inside timestamptz's range (4713 BC to 294276 AD) and
/// an i64 of microseconds, and small enough that a driver's microsecond arithmetic cannot
/// overflow. Only absurd leases or clocks reach them; such a time saturates rather than failing
/// the call.
const EARLIEST: Duration = Duration::from_secs(200_000_000_000);
const LATEST: Duration = Duration::from_secs(9_000_000_000_000);

/// A `SystemTime` as unix microseconds, the unit every timestamp column uses: floored to whole
/// microseconds and clamped into the stored range.
pub fn to_micros(time: SystemTime) -> i64 {
    // Both bounds are far below i64::MAX microseconds, so the casts cannot wrap.
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.min(LATEST).as_micros() as i64,
        Err(before) => {
            let before = before.duration().min(EARLIEST);
            let mut micros = before.as_micros() as i64;
            if before.subsec_nanos() % 1_000 != 0 {
                micros += 1;
            }
            -micros
        }
    }
}

/// The inverse of [`to_micros`].
pub fn from_micros(micros: i64) -> SystemTime {
    let magnitude = Duration::from_micros(micros.unsigned_abs());
    if micros >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

/// `time` as every backend keeps it: floored to whole microseconds, clamped into range.
pub fn whole_micros(time: SystemTime) -> SystemTime {
    from_micros(to_micros(time))
}

/// A random number in [0, 1) for retry jitter, from the standard library's randomly keyed
/// hasher: jitter needs spread, not cryptographic quality.
pub fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_times_are_floored_to_whole_microseconds_and_clamped() {
        let after = UNIX_EPOCH + Duration::new(5, 1_999);
        assert_eq!(whole_micros(after), UNIX_EPOCH + Duration::new(5, 1_000));
        let before = UNIX_EPOCH - Duration::new(5, 1_001);
        assert_eq!(whole_micros(before), UNIX_EPOCH - Duration::new(5, 2_000));
        let whole = UNIX_EPOCH - Duration::new(5, 2_000);
        assert_eq!(whole_micros(whole), whole);
        let far = UNIX_EPOCH + Duration::from_secs(u64::MAX / 4);
        assert_eq!(whole_micros(far), UNIX_EPOCH + LATEST);
    }
}
