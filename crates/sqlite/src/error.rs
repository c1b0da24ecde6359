//! Maps rusqlite errors onto the service's error classes, by SQLite result code.
//!
//! Driver text only ever lands in `Unavailable` or `Internal`, which the gRPC layer logs and
//! replaces with a generic message; every other class gets wording of our own.

use rusqlite::ErrorCode;
use rusqlite::ffi;

use checkpointd_core::error::{Error, Result};

/// Classifies one rusqlite error.
pub(super) fn map(error: rusqlite::Error) -> Error {
    let Some(failure) = error.sqlite_error() else {
        // Conversion, binding and API errors: bugs on our side or a damaged value.
        return Error::internal_from("sqlite", error);
    };
    match failure.code {
        // Another process holds the lock past busy_timeout, or the disk/file misbehaves:
        // nothing the caller did wrong, and a retry may well succeed.
        ErrorCode::DatabaseBusy
        | ErrorCode::DatabaseLocked
        | ErrorCode::SystemIoFailure
        | ErrorCode::CannotOpen
        | ErrorCode::DiskFull
        | ErrorCode::ReadOnly
        | ErrorCode::PermissionDenied
        | ErrorCode::FileLockingProtocolFailed
        | ErrorCode::OutOfMemory => Error::unavailable_from("sqlite", error),
        // A duplicate key can only come from a writer that got in between our read and our
        // write (another process on the same file): the same situation as a lost race.
        ErrorCode::ConstraintViolation
            if matches!(
                failure.extended_code,
                ffi::SQLITE_CONSTRAINT_PRIMARYKEY | ffi::SQLITE_CONSTRAINT_UNIQUE
            ) =>
        {
            Error::Conflict("a concurrent write to the same run got there first; retry".into())
        }
        ErrorCode::TooBig => Error::TooLarge("a value exceeds the database's size limit".into()),
        _ => Error::internal_from("sqlite", error),
    }
}

/// `.db()?` turns a rusqlite result into a service result through [`map`].
pub(crate) trait DbResultExt<T> {
    fn db(self) -> Result<T>;
}

impl<T> DbResultExt<T> for rusqlite::Result<T> {
    fn db(self) -> Result<T> {
        self.map_err(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: std::ffi::c_int) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some("detail from driver".into()))
    }

    #[test]
    fn busy_and_io_errors_are_unavailable() {
        assert!(matches!(
            map(failure(ffi::SQLITE_BUSY)),
            Error::Unavailable { .. }
        ));
        assert!(matches!(
            map(failure(ffi::SQLITE_IOERR)),
            Error::Unavailable { .. }
        ));
        assert!(matches!(
            map(failure(ffi::SQLITE_LOCKED)),
            Error::Unavailable { .. }
        ));
    }

    #[test]
    fn duplicate_keys_are_conflicts_without_driver_text() {
        let error = map(failure(ffi::SQLITE_CONSTRAINT_PRIMARYKEY));
        assert!(matches!(&error, Error::Conflict(msg) if !msg.contains("driver")));
        let error = map(failure(ffi::SQLITE_CONSTRAINT_UNIQUE));
        assert!(matches!(error, Error::Conflict(_)));
    }

    #[test]
    fn other_constraint_and_unknown_errors_are_internal() {
        assert!(matches!(
            map(failure(ffi::SQLITE_CONSTRAINT_NOTNULL)),
            Error::Internal { .. }
        ));
        assert!(matches!(
            map(rusqlite::Error::QueryReturnedNoRows),
            Error::Internal { .. }
        ));
    }
}
