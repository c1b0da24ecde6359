//! Large-column storage: the same 100 KB agent state inserted under pglz compression (the
//! default), with compression off (`STORAGE EXTERNAL`), and under lz4 where the server has it.

use std::sync::Arc;

use super::BoxError;
use super::clients::{BenchClient, Op, RawClient, run_batch};
use super::payload::agent_state;
use super::scenario::Effort;
use super::stats::{Samples, Summary};

/// The size the comparison uses: where TOAST and compression matter.
pub const SIZE: usize = 100 * 1024;

/// One way of storing the payload column.
pub struct Variant {
    pub label: &'static str,
    pub write: Summary,
    pub read: Summary,
    /// Average `pg_column_size(payload)`: bytes stored per row after compression.
    pub stored_bytes: f64,
}

pub struct StorageReport {
    pub variants: Vec<Variant>,
    /// Why lz4 was left out, when it was.
    pub lz4_unavailable: Option<String>,
    /// The server's `default_toast_compression`.
    pub default_compression: String,
}

struct Table {
    label: &'static str,
    name: &'static str,
    /// Run after `CREATE TABLE`; `None` keeps the server's defaults.
    alter: Option<&'static str>,
}

const TABLES: &[Table] = &[
    Table {
        label: "default (pglz)",
        name: "raw_pglz",
        alter: Some("ALTER COLUMN payload SET COMPRESSION pglz"),
    },
    Table {
        label: "EXTERNAL (none)",
        name: "raw_external",
        alter: Some("ALTER COLUMN payload SET STORAGE EXTERNAL"),
    },
    Table {
        label: "lz4",
        name: "raw_lz4",
        alter: Some("ALTER COLUMN payload SET COMPRESSION lz4"),
    },
];

/// Creates the tables in the schema `url` points at and measures INSERT and SELECT on each,
/// interleaved in rounds, with one client.
pub async fn compare(
    admin: &tokio_postgres::Client,
    url: &str,
    effort: Effort,
) -> Result<StorageReport, BoxError> {
    let default_compression = admin
        .query_opt(
            "SELECT setting FROM pg_settings WHERE name = 'default_toast_compression'",
            &[],
        )
        .await?
        .map(|row| row.get::<_, String>(0))
        .unwrap_or_else(|| "pglz (server predates the setting)".to_owned());
    let setup = super::clients::pg_connect(url).await?;
    let mut lz4_unavailable = None;
    let mut tables = Vec::new();
    for table in TABLES {
        setup
            .batch_execute(&format!(
                "CREATE TABLE {} (run text, step bigint, payload bytea, PRIMARY KEY (run, step))",
                table.name
            ))
            .await?;
        if let Some(alter) = table.alter {
            let altered = setup
                .batch_execute(&format!("ALTER TABLE {} {alter}", table.name))
                .await;
            match altered {
                Ok(()) => {}
                // Servers before 14 have no per-column compression: pglz is then the default.
                Err(_) if table.name == "raw_pglz" => {}
                Err(error) if table.name == "raw_lz4" => {
                    lz4_unavailable = Some(error.to_string());
                    continue;
                }
                Err(error) => return Err(error.into()),
            }
        }
        tables.push(table);
    }

    let state = Arc::new(agent_state(SIZE, 42));
    let mut pools: Vec<Vec<Box<dyn BenchClient>>> = Vec::new();
    for table in &tables {
        let client =
            RawClient::connect(url, table.name, "storage".to_owned(), state.clone()).await?;
        pools.push(vec![Box::new(client)]);
    }
    let mut summaries = Vec::new();
    for op in [Op::Write, Op::Read] {
        let mut samples = vec![Samples::default(); tables.len()];
        for pool in &mut pools {
            *pool = run_batch(std::mem::take(pool), op, effort.warmup)
                .await?
                .clients;
        }
        for round in 0..effort.rounds_for(1) {
            for offset in 0..tables.len() {
                let index = (round + offset) % tables.len();
                let batch =
                    run_batch(std::mem::take(&mut pools[index]), op, effort.per_round(1)).await?;
                samples[index].add_batch(&batch.latencies, batch.wall);
                pools[index] = batch.clients;
            }
        }
        summaries.push(samples.iter().map(Samples::summary).collect::<Vec<_>>());
    }

    let mut variants = Vec::new();
    for (index, table) in tables.iter().enumerate() {
        let stored_bytes: f64 = setup
            .query_one(
                &format!(
                    "SELECT avg(pg_column_size(payload))::float8 FROM {}",
                    table.name
                ),
                &[],
            )
            .await?
            .get(0);
        variants.push(Variant {
            label: table.label,
            write: summaries[0][index],
            read: summaries[1][index],
            stored_bytes,
        });
    }
    Ok(StorageReport {
        variants,
        lz4_unavailable,
        default_compression,
    })
}

/// How checkpointd's own bytea columns in `schema` are stored, e.g.
/// `checkpoints.state: storage extended, compression default`.
pub async fn describe_columns(
    admin: &tokio_postgres::Client,
    schema: &str,
) -> Result<Vec<String>, BoxError> {
    let rows = admin
        .query(
            "SELECT c.relname::text, a.attname::text, a.attstorage::text, a.attcompression::text \
             FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attnum > 0 \
               AND NOT a.attisdropped AND a.atttypid = 'bytea'::regtype \
             ORDER BY 1, 2",
            &[&schema],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|row| {
            let storage = match row.get::<_, String>(2).as_str() {
                "x" => "extended (compressed, then out of line)",
                "e" => "external (out of line, uncompressed)",
                "m" => "main (compressed, kept inline)",
                "p" => "plain",
                _ => "unknown",
            };
            let compression = match row.get::<_, String>(3).as_str() {
                "p" => "pglz",
                "l" => "lz4",
                _ => "server default",
            };
            format!(
                "{}.{}: storage {storage}, compression {compression}",
                row.get::<_, String>(0),
                row.get::<_, String>(1)
            )
        })
        .collect())
}
