//! Where each table goes when the schema is distributed by tenant on Citus, declared once: the
//! list `checkpointd db distribute` works from and the schema lint checks the catalogue
//! against, so the command and the schema cannot drift apart.
//!
//! - Distributed by `tenant`, all colocated with `runs`: a tenant's rows of every table live
//!   on one shard group, so every statement scoped by `tenant = $1` (all of them but the few
//!   counts and prunes over every tenant) is routed to one worker, joins and transactions
//!   included.
//! - Reference (a copy on every node): tenant-less data every node may need to read.
//! - Coordinator-local: tables only the coordinator's own connections use.

use crate::PostgresStore;
use crate::error::db;
use checkpointd_core::error::{Error, Result};

/// The distribution column of every distributed table.
pub const DISTRIBUTION_COLUMN: &str = "tenant";

/// Tables distributed by [`DISTRIBUTION_COLUMN`], colocated with the first: each has the
/// column, and each of its primary and unique keys includes it (Citus enforces a unique key
/// only within a shard).
pub const DISTRIBUTED: &[&str] = &[
    "runs",
    "checkpoints",
    "messages",
    "tool_results",
    "checkpoint_pins",
    "journal_actions",
    "tasks",
    "webhook_endpoints",
    "notification_events",
    "webhook_deliveries",
];

/// Reference tables. `api_keys` has a `tenant` column, but NULL there means every tenant
/// (admin keys), and a key is looked up by its id alone before any tenant is known, so it
/// cannot live in one tenant's shard. It is small and rarely written, and as a reference table
/// it stays readable from every node (Citus 11+ accepts queries on workers too).
pub const REFERENCE: &[&str] = &["api_keys"];

/// Coordinator-local tables. `checkpointd_migrations` records the applied schema versions; it
/// is read and written only by the migrator under an advisory lock, which is a lock of the
/// node it is taken on, so migrations run on the coordinator.
pub const COORDINATOR_LOCAL: &[&str] = &["checkpointd_migrations"];

/// The statements that distribute a migrated schema, in order: the colocation group's first
/// table, the rest colocated with it, then the reference tables. Table names are unqualified,
/// so they apply to the schema first in the connection's search_path.
pub fn distribute_statements() -> Vec<String> {
    let (first, rest) = DISTRIBUTED.split_first().expect("a distributed table");
    let mut statements = vec![format!(
        "SELECT create_distributed_table('{first}', '{DISTRIBUTION_COLUMN}');"
    )];
    statements.extend(rest.iter().map(|table| {
        format!(
            "SELECT create_distributed_table('{table}', '{DISTRIBUTION_COLUMN}', \
             colocate_with => '{first}');"
        )
    }));
    statements.extend(
        REFERENCE
            .iter()
            .map(|table| format!("SELECT create_reference_table('{table}');")),
    );
    statements
}

/// The table a distribute statement acts on: the first quoted name in it.
fn table_of(statement: &str) -> &str {
    statement.split('\'').nth(1).unwrap_or_default()
}

impl PostgresStore {
    /// Distributes this (migrated) schema's tables as [`distribute_statements`] says, skipping
    /// tables Citus already knows, and returns the statements it ran. Refuses a database
    /// without the `citus` extension, and a schema the lint ([`Self::placement_violations`])
    /// finds fault with, before changing anything.
    pub async fn distribute(&self) -> Result<Vec<String>> {
        let citus = self
            .client()
            .await?
            .query_one(
                "SELECT to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL",
                &[],
            )
            .await
            .map_err(db)?;
        if !citus.get::<_, bool>(0) {
            return Err(Error::InvalidArgument(
                "this database has no citus extension (CREATE EXTENSION citus on the \
                 coordinator and every worker first)"
                    .into(),
            ));
        }
        let violations = self.placement_violations().await?;
        if !violations.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "the schema does not match the declared placement: {}",
                violations.join("; ")
            )));
        }
        // Taken after the lint's connection went back: one connection is all this needs.
        let client = self.client().await?;
        let mut ran = Vec::new();
        for statement in distribute_statements() {
            let known = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_dist_partition
                                     WHERE logicalrelid = to_regclass($1))",
                    &[&table_of(&statement)],
                )
                .await
                .map_err(db)?;
            if known.get::<_, bool>(0) {
                continue;
            }
            client.batch_execute(&statement).await.map_err(db)?;
            ran.push(statement);
        }
        Ok(ran)
    }

    /// The schema lint, on the catalogue of the schema first in the search_path: every table
    /// is declared in exactly one place, every declared table exists, and every distributed
    /// table has the distribution column in each primary and unique key. Empty when the schema
    /// can be distributed as declared.
    pub async fn placement_violations(&self) -> Result<Vec<String>> {
        let client = self.client().await?;
        let tables = client
            .query(
                "SELECT c.relname::text,
                        EXISTS (SELECT 1 FROM pg_attribute a
                                 WHERE a.attrelid = c.oid AND a.attname = $1
                                   AND NOT a.attisdropped) AS has_column
                   FROM pg_class c
                  WHERE c.relnamespace = current_schema()::regnamespace
                    AND c.relkind IN ('r', 'p')
                  ORDER BY 1",
                &[&DISTRIBUTION_COLUMN],
            )
            .await
            .map_err(db)?;
        let keys = client
            .query(
                "SELECT c.relname::text, i.indexrelid::regclass::text,
                        EXISTS (SELECT 1 FROM pg_attribute a
                                 WHERE a.attrelid = c.oid AND a.attname = $1
                                   AND a.attnum = ANY (i.indkey)) AS has_column
                   FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
                  WHERE c.relnamespace = current_schema()::regnamespace
                    AND (i.indisprimary OR i.indisunique)
                  ORDER BY 1, 2",
                &[&DISTRIBUTION_COLUMN],
            )
            .await
            .map_err(db)?;
        let tables: Vec<(String, bool)> = tables.iter().map(|r| (r.get(0), r.get(1))).collect();
        let keys: Vec<(String, String, bool)> = keys
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        Ok(violations(&tables, &keys))
    }
}

/// The lint's rules over the catalogue's facts: `tables` as (name, has the distribution
/// column), `keys` as (table, key, includes the distribution column).
fn violations(tables: &[(String, bool)], keys: &[(String, String, bool)]) -> Vec<String> {
    let declared = |name: &str| {
        [DISTRIBUTED, REFERENCE, COORDINATOR_LOCAL]
            .iter()
            .filter(|list| list.contains(&name))
            .count()
    };
    let mut found = Vec::new();
    for (table, has_column) in tables {
        match declared(table) {
            0 => found.push(format!(
                "table {table} has no declared place (add it to DISTRIBUTED, REFERENCE or \
                 COORDINATOR_LOCAL in crates/postgres/src/placement.rs)"
            )),
            1 => {}
            _ => found.push(format!("table {table} is declared in more than one place")),
        }
        if DISTRIBUTED.contains(&table.as_str()) && !has_column {
            found.push(format!(
                "distributed table {table} has no {DISTRIBUTION_COLUMN} column"
            ));
        }
    }
    for (table, key, has_column) in keys {
        let distributed = DISTRIBUTED.contains(&table.as_str());
        let tenant_table = tables.iter().any(|(name, column)| name == table && *column);
        let exempt =
            REFERENCE.contains(&table.as_str()) || COORDINATOR_LOCAL.contains(&table.as_str());
        if (distributed || (tenant_table && !exempt)) && !has_column {
            found.push(format!(
                "key {key} of tenant table {table} lacks {DISTRIBUTION_COLUMN}"
            ));
        }
    }
    let all = DISTRIBUTED.iter().chain(REFERENCE).chain(COORDINATOR_LOCAL);
    for name in all {
        if !tables.iter().any(|(table, _)| table == name) {
            found.push(format!("declared table {name} is not in the schema"));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_table_has_one_distribute_statement() {
        let statements = distribute_statements();
        let distributed: Vec<&str> = statements
            .iter()
            .filter(|s| s.contains("create_distributed_table"))
            .map(|s| table_of(s))
            .collect();
        let reference: Vec<&str> = statements
            .iter()
            .filter(|s| s.contains("create_reference_table"))
            .map(|s| table_of(s))
            .collect();
        assert_eq!(distributed, DISTRIBUTED);
        assert_eq!(reference, REFERENCE);
        assert_eq!(statements.len(), DISTRIBUTED.len() + REFERENCE.len());
        assert!(
            statements[1..DISTRIBUTED.len()]
                .iter()
                .all(|s| s.contains("colocate_with => 'runs'"))
        );
    }

    #[test]
    fn the_rules_name_an_undeclared_table_and_a_key_without_tenant() {
        let mut tables: Vec<(String, bool)> = DISTRIBUTED
            .iter()
            .chain(REFERENCE)
            .chain(COORDINATOR_LOCAL)
            .map(|t| (t.to_string(), !COORDINATOR_LOCAL.contains(t)))
            .collect();
        assert!(violations(&tables, &[]).is_empty());
        tables.push(("stray".into(), true));
        let keys = [("stray".into(), "stray_pkey".into(), false)];
        let found = violations(&tables, &keys);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("table stray has no declared place"));
        assert!(found[1].contains("key stray_pkey of tenant table stray lacks tenant"));
    }
}
