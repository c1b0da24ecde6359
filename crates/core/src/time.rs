//! Stored time: every backend keeps timestamps as whole microseconds since the Unix epoch (the
//! unit of Postgres's `timestamptz` and of SQLite's integer columns), so a time handed to a
//! client equals what a later read returns. The one conversion, written once.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A `SystemTime` as unix microseconds, the unit every timestamp column uses.
pub fn to_micros(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_micros()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_micros())
            .map(|micros| -micros)
            .unwrap_or(i64::MIN),
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

/// `time` floored to whole microseconds, as every backend keeps it.
pub fn whole_micros(time: SystemTime) -> SystemTime {
    from_micros(to_micros(time))
}
