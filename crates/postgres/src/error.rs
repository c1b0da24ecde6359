//! Maps driver and pool failures to [`Error`] by SQLSTATE, in one place.
//!
//! The driver's error only ever lands, whole, as the source of `Unavailable` and `Internal`,
//! whose chains are logged and never sent to clients; the variants clients do read get a
//! message written here.

use std::error::Error as _;
use std::sync::atomic::{AtomicBool, Ordering};

use deadpool_postgres::PoolError;
use tokio_postgres::error::SqlState;

use checkpointd_core::error::Error;

/// The SQLSTATE of a unique violation, which the fast paths treat as "take the slow path".
pub(super) fn is_unique_violation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

/// Classifies a driver error.
pub(crate) fn db(error: tokio_postgres::Error) -> Error {
    let Some(code) = error.code() else {
        return without_sqlstate(error);
    };
    let code = code.code();
    match code {
        // A concurrent writer won a race the run lock did not cover (or rows were edited behind
        // checkpointd's back); the caller may retry and will then see the winner.
        "23505" => Error::Conflict(
            "a concurrent write to the same run got there first; retry the request".to_owned(),
        ),
        // A named prepared statement missing (26000) or its name already taken (42P05) on the
        // server connection: a transaction-mode pooler is handing out connections under
        // `--postgres-statements prepared`. Retryable (the next transaction may land where the
        // statement is), and an operator's to fix, so loud in the log and never INTERNAL.
        "26000" | "42P05" => {
            let code = code.to_owned();
            behind_a_transaction_pooler(&code, error)
        }
        // Serialization failures and deadlocks are transient by definition.
        "40001" | "40P01" => Error::unavailable_from("transient conflict in postgres", error),
        // The SQLSTATE in the context: the driver's own text names only the severity.
        _ if is_unavailable(code) => Error::unavailable_from(format!("postgres {code}"), error),
        _ => Error::internal_from(format!("postgres {code}"), error),
    }
}

/// What a caller sees when prepared statements are lost between transactions; the first time,
/// one error line tells the operator which setting to change.
fn behind_a_transaction_pooler(code: &str, error: tokio_postgres::Error) -> Error {
    static LOGGED: AtomicBool = AtomicBool::new(false);
    if !LOGGED.swap(true, Ordering::Relaxed) {
        tracing::error!(
            sqlstate = code,
            setting = "--postgres-statements unnamed (CHECKPOINTD_POSTGRES_STATEMENTS=unnamed)",
            "postgres lost a prepared statement between transactions: the database is reached \
             through a transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor); restart with \
             --postgres-statements unnamed"
        );
    }
    Error::unavailable_from(
        format!(
            "postgres {code}: the database is behind a transaction-mode pooler this server is \
             not configured for (--postgres-statements unnamed); retry later"
        ),
        error,
    )
}

/// SQLSTATEs that mean "the database cannot serve us right now", so clients should retry.
fn is_unavailable(code: &str) -> bool {
    // 08: connection exceptions. 53: insufficient resources (too many connections, disk full).
    // 57P0x: admin/crash shutdown, cannot connect now, database dropped. 57014: a statement
    // timeout. 55P03: lock timeout. 25006: a read-only transaction, i.e. we reached a standby
    // during a failover. 28 and 3D000: bad credentials or a missing database; an operator must
    // act, but for a client this is still "storage unavailable", not a bug.
    code.starts_with("08")
        || code.starts_with("53")
        || code.starts_with("57P0")
        || code.starts_with("28")
        || matches!(code, "57014" | "55P03" | "25006" | "3D000")
}

/// Errors without a SQLSTATE: I/O, a closed connection, timeouts, or our own type mismatch.
fn without_sqlstate(error: tokio_postgres::Error) -> Error {
    // The driver's error kind is private; its Display text for the connection-level kinds is
    // stable within tokio-postgres 0.7, and an I/O source is unambiguous.
    let text = error.to_string();
    let io = error
        .source()
        .is_some_and(|source| source.is::<std::io::Error>());
    let connection_level = [
        "error communicating with the server",
        "error connecting to server",
        "timeout waiting for server",
        "error performing TLS handshake",
        "authentication error",
    ]
    .iter()
    .any(|prefix| text.starts_with(prefix));
    if error.is_closed() || io || connection_level {
        Error::unavailable_from("postgres", error)
    } else {
        Error::internal_from("postgres", error)
    }
}

/// Classifies a failure to get a connection from the pool.
pub(super) fn pool(error: PoolError) -> Error {
    match error {
        PoolError::Backend(error) => db(error),
        PoolError::Timeout(kind) => Error::unavailable(format!(
            "no postgres connection within the pool's {kind:?} timeout"
        )),
        PoolError::Closed => Error::unavailable("the postgres pool is closed"),
        other => Error::internal_from("postgres pool", other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_sqlstates_are_unavailable_and_the_rest_internal() {
        for code in [
            "08006", "08001", "57P01", "57P03", "53300", "28P01", "3D000", "57014",
        ] {
            assert!(is_unavailable(code), "{code}");
        }
        for code in ["42P01", "22P02", "23502", "XX000", "25P02"] {
            assert!(!is_unavailable(code), "{code}");
        }
    }

    #[test]
    fn lost_prepared_statements_are_unavailable_and_name_the_setting() {
        let error = behind_a_transaction_pooler("26000", tokio_postgres_error());
        let Error::Unavailable {
            context: message, ..
        } = &error
        else {
            panic!("{error:?}");
        };
        assert!(
            message.contains("--postgres-statements unnamed"),
            "{message}"
        );
    }

    /// Any driver error, as the source the mapping wraps.
    fn tokio_postgres_error() -> tokio_postgres::Error {
        "not a url".parse::<tokio_postgres::Config>().unwrap_err()
    }

    #[test]
    fn pool_timeouts_are_unavailable() {
        let error = pool(PoolError::Timeout(deadpool_postgres::TimeoutType::Wait));
        assert!(matches!(error, Error::Unavailable { .. }), "{error:?}");
    }
}
