//! Versioned schema migrations, applied on connect under an advisory lock.

use deadpool_postgres::Client;

use crate::error::db;
use checkpointd_core::error::Result;

/// Embeds each schema version's file from this crate's `migrations/`.
macro_rules! embed {
    ($($version:literal => $name:literal),* $(,)?) => {
        &[$(($version, include_str!(concat!("../../migrations/", $name, ".sql")))),*]
    };
}

/// Every migration, in order; the version is what the database records as applied. A version
/// is never edited once released; changes go in a new version.
const MIGRATIONS: &[(i32, &str)] = checkpointd_storage::schema_versions!(embed);

/// The advisory lock key: one constant for every checkpointd instance ("cpd" + "migr" in ASCII),
/// so two instances starting at once migrate one after the other. It is deliberately global to
/// the database rather than per schema: migrations take milliseconds, and serialising instances
/// that use different schemas costs nothing while ruling out any key collision between schemas.
const LOCK_KEY: i64 = 0x6370_645f_6d69_6772;

/// Brings the schema in the connection's search_path up to date.
///
/// Runs in one transaction holding `pg_advisory_xact_lock`: the transaction-scoped lock is freed
/// by commit, rollback or a dropped connection, so an interrupted migration can never leave the
/// lock held on a connection that goes back to the pool. DDL is transactional in Postgres, so a
/// failed migration leaves the schema exactly as it was.
pub(super) async fn run(client: &mut Client) -> Result<()> {
    let tx = client.transaction().await.map_err(db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .await
        .map_err(db)?;
    // Looked up rather than `CREATE TABLE IF NOT EXISTS`: on every start after the first,
    // that statement makes Postgres send a NOTICE ("already exists, skipping"), which
    // tokio-postgres logs at INFO, an alarming line about nothing. The advisory lock above
    // keeps another instance from creating the table between the look-up and the create;
    // the schema is the one `CREATE TABLE` would create it in.
    let exists: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_tables \
             WHERE schemaname = current_schema() AND tablename = 'checkpointd_migrations')",
            &[],
        )
        .await
        .map_err(db)?
        .get(0);
    if exists {
        tracing::debug!("postgres migrations table present");
    } else {
        tx.batch_execute(
            "CREATE TABLE checkpointd_migrations (
                 version    int PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await
        .map_err(db)?;
    }
    let applied: Vec<i32> = tx
        .query("SELECT version FROM checkpointd_migrations", &[])
        .await
        .map_err(db)?
        .iter()
        .map(|row| row.get(0))
        .collect();
    for (version, sql) in MIGRATIONS {
        if applied.contains(version) {
            continue;
        }
        tx.batch_execute(sql).await.map_err(db)?;
        tx.execute(
            "INSERT INTO checkpointd_migrations (version) VALUES ($1)",
            &[version],
        )
        .await
        .map_err(db)?;
        tracing::info!(version, "postgres migration applied");
    }
    tx.commit().await.map_err(db)
}
