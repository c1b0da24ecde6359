//! Opening connections with the PRAGMAs durability needs, and applying the versioned migrations
//! embedded from the crate's `migrations/`.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::codec;
use crate::error::DbResultExt;
use checkpointd_core::error::{Error, Result};

/// Embeds each schema version's file from this crate's `migrations/`.
macro_rules! embed {
    ($($version:literal => $name:literal),* $(,)?) => {
        &[$(($version, include_str!(concat!("../../migrations/", $name, ".sql")))),*]
    };
}

/// Every migration, in order; the version is what the database records as applied. A version
/// is never edited once released; changes go in a new version.
const MIGRATIONS: &[(i64, &str)] = checkpointd_storage::schema_versions!(embed);

/// How long a statement waits for another process's lock before failing as `Unavailable`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const STATEMENT_CACHE: usize = 64;

/// Whether `path` names a private in-memory database rather than a file.
pub(super) fn is_memory(path: &str) -> bool {
    path.is_empty() || path == ":memory:"
}

/// Opens the read-write connection, creating the file and its directory if needed, and brings
/// the schema up to date.
pub(super) fn open_writer(path: &str) -> Result<Connection> {
    if !is_memory(path)
        && let Some(parent) = Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|error| {
            Error::unavailable_from(
                format!("cannot create the directory of sqlite database {path}"),
                error,
            )
        })?;
    }
    let mut conn = Connection::open(path).db()?;
    configure(&conn)?;
    // WAL lets readers run beside the writer; it is a property of the file, set once by the
    // writer. An in-memory database answers "memory", which is fine.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .db()?;
    if !mode.eq_ignore_ascii_case("wal") && !is_memory(path) {
        return Err(Error::internal(format!(
            "sqlite database {path} refused WAL mode (journal_mode is {mode})"
        )));
    }
    migrate(&mut conn)?;
    Ok(conn)
}

/// Opens a read-only connection for loads, which WAL lets run while a Save commits.
pub(super) fn open_reader(path: &str) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .db()?;
    configure(&conn)?;
    Ok(conn)
}

/// Per-connection settings; SQLite forgets them when a connection closes.
fn configure(conn: &Connection) -> Result<()> {
    // Every query is `prepare_cached`; the writer alone uses about twenty distinct statements,
    // more than rusqlite's default cache of 16 keeps.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.busy_timeout(BUSY_TIMEOUT).db()?;
    // FULL syncs the WAL on every commit: an acknowledged Save survives power loss, not just a
    // process crash (NORMAL in WAL mode may lose the last commits on power loss).
    conn.pragma_update(None, "synchronous", "FULL").db()?;
    conn.pragma_update(None, "foreign_keys", "ON").db()?;
    Ok(())
}

/// Applies every migration newer than the database's version, each recorded in
/// `checkpointd_migrations`, all in one IMMEDIATE transaction so two processes opening the same
/// file at once cannot both apply one.
fn migrate(conn: &mut Connection) -> Result<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS checkpointd_migrations (
             version    INTEGER PRIMARY KEY,
             applied_at INTEGER NOT NULL
         )",
    )
    .db()?;
    let current: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM checkpointd_migrations",
            [],
            |row| row.get(0),
        )
        .db()?;
    let known = MIGRATIONS.last().map_or(0, |(version, _)| *version);
    if current > known {
        // An older binary must not write into a schema it does not understand.
        return Err(Error::internal(format!(
            "sqlite schema is at version {current}, newer than this binary's {known}"
        )));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(version, _)| *version > current) {
        tx.execute_batch(sql).db()?;
        tx.execute(
            "INSERT INTO checkpointd_migrations (version, applied_at) VALUES (?1, ?2)",
            (version, codec::now().1),
        )
        .db()?;
        tracing::info!(version, "applied sqlite migration");
    }
    tx.commit().db()
}
