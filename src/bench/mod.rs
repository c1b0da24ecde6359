//! `checkpointd bench`: Save and LoadLatest measured side by side with raw SQL.
//!
//! Every contender runs in this process against the same Postgres: raw tokio-postgres
//! statements, and checkpointd servers on `127.0.0.1:0` (Postgres, SQLite, memory) reached by
//! real tonic clients over loopback. Contenders take turns in rounds, so a noisy machine slows
//! them alike and the ratios stay meaningful.

mod clients;
mod payload;
mod report;
mod scenario;
mod stats;
mod storage;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Args;

use crate::store::{StoreOptions, redact_url};
use clients::{InProcessServer, pg_connect};
use scenario::{Contender, Effort, Kind, Target};

/// Errors inside the benchmark; they cross tasks, hence `Send + Sync`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The state sizes every scenario is measured at.
const SIZES: [usize; 3] = [1024, 10 * 1024, 100 * 1024];

/// Flags of `checkpointd bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Postgres URL to measure against; schemas `bench_<pid>_<n>` are created and dropped in it.
    #[arg(
        long,
        env = "CHECKPOINTD_BENCH_DATABASE",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pub postgres: String,
    /// Operations per contender per measurement with one client (four times that, split
    /// across the clients, with many) [default: 300, or 20 with --quick].
    #[arg(long)]
    pub iterations: Option<usize>,
    /// A small smoke run, for CI.
    #[arg(long)]
    pub quick: bool,
    /// Concurrent clients in the many-clients scenarios.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// checkpointd stores to measure; raw SQL on Postgres always runs.
    #[arg(long, value_delimiter = ',', default_value = "postgres,sqlite,memory")]
    pub stores: Vec<Kind>,
    /// Connections in checkpointd's Postgres pool [default: the server's default].
    #[arg(long)]
    pub pool_size: Option<usize>,
}

pub async fn run(args: BenchArgs) -> Result<(), Box<dyn std::error::Error>> {
    run_bench(args).await.map_err(|error| error as _)
}

async fn run_bench(args: BenchArgs) -> Result<(), BoxError> {
    let effort = Effort {
        iterations: args
            .iterations
            .unwrap_or(if args.quick { 20 } else { 300 })
            .max(1),
        rounds: if args.quick { 2 } else { 5 },
        warmup: if args.quick { 1 } else { 3 },
    };
    let mut concurrencies = vec![1];
    if args.concurrency > 1 {
        concurrencies.push(args.concurrency);
    }
    let mut stores = args.stores.clone();
    stores.retain(|kind| *kind != Kind::Raw);
    stores.sort();
    stores.dedup();
    let options = StoreOptions {
        pool_size: args.pool_size.unwrap_or(StoreOptions::default().pool_size),
    };

    let admin = pg_connect(&args.postgres).await.map_err(|error| {
        format!("{error} (bench compares against raw SQL on Postgres; pass --postgres URL)")
    })?;
    let version: String = admin.query_one("SHOW server_version", &[]).await?.get(0);
    print_header(&args.postgres, &version, effort, &concurrencies, &options);

    let store_schema = create_schema(&admin).await?;
    let raw_schema = create_schema(&admin).await?;
    let scratch = std::env::temp_dir().join(format!("checkpointd-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let outcome = measure(Setup {
        admin: &admin,
        base: &args.postgres,
        store_schema: &store_schema,
        raw_schema: &raw_schema,
        scratch: scratch.clone(),
        stores: &stores,
        options: &options,
        effort,
        concurrencies: &concurrencies,
    })
    .await;
    for schema in [&store_schema, &raw_schema] {
        if let Err(error) = admin
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .await
        {
            eprintln!("bench: could not drop schema {schema}: {error}");
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

struct Setup<'a> {
    admin: &'a tokio_postgres::Client,
    base: &'a str,
    store_schema: &'a str,
    raw_schema: &'a str,
    scratch: PathBuf,
    stores: &'a [Kind],
    options: &'a StoreOptions,
    effort: Effort,
    concurrencies: &'a [usize],
}

async fn measure(setup: Setup<'_>) -> Result<(), BoxError> {
    let started = Instant::now();
    let raw_url = url_with_schema(setup.base, setup.raw_schema);
    pg_connect(&raw_url)
        .await?
        .batch_execute(
            "CREATE TABLE raw_bench (run text, step bigint, payload bytea, PRIMARY KEY (run, step))",
        )
        .await?;
    let mut contenders = vec![Contender {
        kind: Kind::Raw,
        target: Target::Raw {
            url: raw_url.clone(),
            table: "raw_bench".to_owned(),
        },
    }];
    let mut servers = Vec::new();
    for &kind in setup.stores {
        let url = match kind {
            Kind::Postgres => url_with_schema(setup.base, setup.store_schema),
            Kind::Sqlite => format!("sqlite://{}", setup.scratch.join("bench.db").display()),
            Kind::Memory | Kind::Raw => "memory://".to_owned(),
        };
        let server = InProcessServer::start(&url, setup.options).await?;
        contenders.push(Contender {
            kind,
            target: Target::Grpc { addr: server.addr },
        });
        servers.push(server);
    }

    let mut results = Vec::new();
    for size in SIZES {
        for &clients in setup.concurrencies {
            eprintln!(
                "bench: {:>6}, {:>2} client(s) ... ({:.0?} elapsed)",
                report::size_label(size),
                clients,
                started.elapsed()
            );
            results.extend(scenario::run(&contenders, size, clients, setup.effort).await?);
        }
    }
    eprintln!(
        "bench: large-column storage ... ({:.0?} elapsed)",
        started.elapsed()
    );
    let storage = storage::compare(setup.admin, &raw_url, setup.effort).await?;
    let columns = if setup.stores.contains(&Kind::Postgres) {
        storage::describe_columns(setup.admin, setup.store_schema)
            .await
            .unwrap_or_else(|error| vec![format!("(could not read the catalog: {error})")])
    } else {
        Vec::new()
    };
    for server in servers {
        server.stop().await?;
    }
    eprintln!("bench: done in {:.1?}", started.elapsed());

    let many = setup.concurrencies.last().copied().unwrap_or(1);
    report::print_tables(&results, &SIZES, setup.concurrencies);
    report::print_storage(&storage, &columns);
    report::print_summary(&results, &SIZES, many);
    Ok(())
}

fn print_header(
    url: &str,
    version: &str,
    effort: Effort,
    concurrencies: &[usize],
    options: &StoreOptions,
) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("checkpointd bench");
    println!("  postgres     {} (server {version})", redact_url(url));
    println!("  machine      {cores} cores{}", memory_label());
    println!(
        "  effort       per contender and measurement: {}; {} warm-up ops per client",
        concurrencies
            .iter()
            .map(|&c| format!(
                "{} ops in {} interleaved rounds at {c} client(s)",
                effort.ops(c),
                effort.rounds_for(c)
            ))
            .collect::<Vec<_>>()
            .join(", "),
        effort.warmup
    );
    println!(
        "  clients      {concurrencies:?}; checkpointd postgres pool {} connections; raw SQL one connection per client",
        options.pool_size
    );
    println!(
        "  latency      per call, measured by the client; ops/s = all clients' calls / wall time"
    );
}

/// `, N GiB RAM` from /proc/meminfo where there is one.
fn memory_label() -> String {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|line| line.starts_with("MemTotal:"))?;
            let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(format!(", {:.0} GiB RAM", kib / (1024.0 * 1024.0)))
        })
        .unwrap_or_default()
}

static NEXT_SCHEMA: AtomicU64 = AtomicU64::new(0);

/// Creates `bench_<pid>_<n>` and returns its name.
async fn create_schema(admin: &tokio_postgres::Client) -> Result<String, BoxError> {
    let name = format!(
        "bench_{}_{}",
        std::process::id(),
        NEXT_SCHEMA.fetch_add(1, Ordering::Relaxed)
    );
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
        ))
        .await?;
    Ok(name)
}

/// Adds `options=-csearch_path=<schema>` to a Postgres URL.
fn url_with_schema(base: &str, schema: &str) -> String {
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-csearch_path%3D{schema}")
}

#[cfg(test)]
mod tests {
    use super::clients::{InProcessServer, Op};
    use super::scenario::{self, Contender, Effort, Kind, Target};
    use super::*;

    #[test]
    fn schema_options_join_an_existing_query() {
        assert_eq!(
            url_with_schema("postgres://h/db", "s"),
            "postgres://h/db?options=-csearch_path%3Ds"
        );
        assert_eq!(
            url_with_schema("postgres://h/db?sslmode=disable", "s"),
            "postgres://h/db?sslmode=disable&options=-csearch_path%3Ds"
        );
    }

    #[test]
    fn many_clients_share_four_times_the_work_in_rounds() {
        let effort = Effort {
            iterations: 300,
            rounds: 5,
            warmup: 3,
        };
        assert_eq!(effort.per_round(1), 20);
        assert_eq!(effort.ops(1), 300);
        assert_eq!(effort.per_round(32), 8);
        assert_eq!(effort.ops(32), 1280);
    }

    /// The whole measurement path (server, clients, rounds, summaries) on the memory store.
    #[tokio::test]
    async fn a_memory_scenario_measures_every_write_and_read() {
        let server = InProcessServer::start("memory://", &StoreOptions::default())
            .await
            .unwrap();
        let contenders = [Contender {
            kind: Kind::Memory,
            target: Target::Grpc { addr: server.addr },
        }];
        let effort = Effort {
            iterations: 6,
            rounds: 2,
            warmup: 1,
        };
        let results = scenario::run(&contenders, 1024, 2, effort).await.unwrap();
        assert_eq!(results.len(), 2);
        for result in &results {
            // 6 * 4 ops over 2 clients in 2 rounds: 6 per client per round.
            assert_eq!(result.summary.ops, effort.ops(2), "{result:?}");
            assert_eq!(result.summary.ops, 24);
            assert!(result.summary.p50 <= result.summary.p99);
            assert!(result.summary.ops_per_sec > 0.0);
        }
        assert_eq!(results[0].op, Op::Write);
        assert_eq!(results[1].op, Op::Read);
        server.stop().await.unwrap();
    }
}
