//! `checkpointd-bench`: Save and LoadLatest measured side by side with raw SQL and against the
//! floor (one gRPC hop plus one SQL statement), then the task queue: claim-to-complete
//! throughput, and recovery from a SIGKILLed worker; the cache and what identity costs; then
//! scaling: tracing overhead, history length (with the prefix held) and long conversations; and, on
//! request, what each language's client adds over the Rust one. The
//! run ends with one line per performance target of issue 20.
//!
//! Every contender runs in this process against the same Postgres: raw tokio-postgres
//! statements (and, for the SQLite store's floor, raw rusqlite statements on a file), and
//! checkpointd servers on `127.0.0.1:0` (Postgres, SQLite, memory) reached by
//! real tonic clients over loopback. Contenders take turns in rounds, so a noisy machine slows
//! them alike and the ratios stay meaningful. The recovery scenario runs real `checkpointd
//! worker` processes, and the tracing scenario `checkpointd serve` processes, from the
//! `checkpointd` binary beside this one (or `--checkpointd-bin`).
//!
//! Unpublished and not part of the product binary; run it with
//! `cargo build --release -p checkpointd && cargo run --release -p checkpointd-bench -- [flags]`.

mod cache;
mod claimer;
mod clients;
mod conversation;
mod floor;
mod held_prefix;
mod history;
mod identity;
mod languages;
mod overhead;
mod payload;
mod pooler;
mod queue;
mod recovery;
mod report;
mod scaling;
mod scenario;
mod schemas;
mod server_process;
mod stats;
mod storage;
mod targets;
mod tasks;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use checkpointd_storage::store::StoreOptions;
use checkpointd_testkit::url_with_schema;
use clients::{InProcessServer, pg_connect};
use queue::QueueEffort;
use recovery::RecoveryEffort;
use scenario::{Contender, Effort, Kind, Target};
use schemas::Schemas;
use server_process::CheckpointdBinary;

/// Errors inside the benchmark; they cross tasks, hence `Send + Sync`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The state sizes every scenario is measured at.
const SIZES: [usize; 3] = [1024, 10 * 1024, 100 * 1024];

/// A part of the benchmark that can run alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Scenario {
    /// Save and LoadLatest against raw SQL, and large-column storage.
    Core,
    /// Claim-to-complete throughput of concurrent workers on Postgres.
    Queue,
    /// SIGKILLed worker process to resumption on another.
    Recovery,
    /// LoadLatest and Save with the Redis cache against Postgres alone.
    Cache,
    /// Save and GetRun p50 with `--auth api-key` against no authentication.
    Identity,
    /// Save p50 with OTLP trace and metric export on against off.
    Tracing,
    /// LoadLatest and Resume on runs of 10, 1,000 and 10,000 checkpoints; LoadLatest,
    /// LoadAtStep and Resume with the prefix held on runs of 10 to 100,000 messages and a
    /// 10,000-entry journal.
    History,
    /// Bytes and latency per Save along a 1,000-message conversation.
    Conversation,
    /// Save and LoadLatest p50 and many-client throughput through PgBouncer in transaction mode
    /// against direct (not in the default set: it needs PgBouncer, see `--pgbouncer`).
    Pooler,
    /// Save and LoadLatest p50 of the Rust, Python, TypeScript and Go clients against one server
    /// (not in the default set: it needs the Python package, the TypeScript test build and Go).
    Languages,
}

/// Flags of `checkpointd-bench`.
#[derive(Debug, clap::Parser)]
#[command(
    name = "checkpointd-bench",
    version,
    about = "Measure checkpointd against raw SQL: Save and LoadLatest, the task queue, recovery, \
             the cache, tracing overhead, history length and long conversations"
)]
pub struct BenchArgs {
    /// Postgres URL to measure against; schemas `bench_<pid>_...` are created and dropped in it.
    #[arg(
        long,
        env = "CHECKPOINTD_BENCH_DATABASE",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pub postgres: String,
    /// Pooler scenario: PgBouncer in transaction mode in front of the `--postgres` server.
    #[arg(
        long,
        env = "TEST_PGBOUNCER_TRANSACTION_URL",
        default_value = "postgres://postgres@127.0.0.1:6432/test"
    )]
    pub pgbouncer: String,
    /// Scenarios to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "core,queue,recovery,cache,identity,tracing,history,conversation"
    )]
    pub scenarios: Vec<Scenario>,
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
    /// Queue scenario: tasks per variant [default: 2000, or 200 with --quick].
    #[arg(long)]
    pub queue_tasks: Option<usize>,
    /// Queue scenario: concurrent claimers, each with its own connection.
    #[arg(long, default_value_t = 8)]
    pub queue_workers: usize,
    /// Redis the cache scenario puts in front of Postgres.
    #[arg(
        long,
        env = "CHECKPOINTD_BENCH_REDIS",
        default_value = "redis://127.0.0.1:6379"
    )]
    pub redis: String,
    /// Recovery scenario: crashes measured [default: 5, or 2 with --quick].
    #[arg(long)]
    pub recovery_runs: Option<usize>,
    /// History scenario: checkpoints in the longest run; the others hold 10 and a tenth of it
    /// [default: 10000, or 1000 with --quick].
    #[arg(long)]
    pub longest_history: Option<usize>,
    /// History scenario: messages in the longest run loaded with the prefix held; the others
    /// hold 10, a fiftieth and a fifth of it [default: 100000, or 2000 with --quick].
    #[arg(long)]
    pub longest_messages: Option<usize>,
    /// History scenario: entries in the journal of the run loaded with JOURNAL_SCOPE_STEP; 0
    /// leaves that run out [default: 10000, or 1000 with --quick].
    #[arg(long)]
    pub journal_entries: Option<usize>,
    /// History scenario: calls of each load per run with the prefix held [default: 20, or 4
    /// with --quick].
    #[arg(long)]
    pub history_reads: Option<usize>,
    /// Conversation scenario: conversations of 1,000 messages [default: 3, or 1 with --quick].
    #[arg(long)]
    pub conversations: Option<usize>,
    /// Languages scenario: the Python interpreter, which must import the `checkpointd` package.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// Languages scenario: the Node.js executable.
    #[arg(long, default_value = "node")]
    pub node: String,
    /// The `checkpointd` binary the recovery and tracing scenarios run [default: `checkpointd`
    /// in the directory of this executable].
    #[arg(long, env = "CHECKPOINTD_BIN")]
    pub checkpointd_bin: Option<PathBuf>,
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
    let queue_effort = QueueEffort {
        tasks: args
            .queue_tasks
            .unwrap_or(if args.quick { 200 } else { 2000 })
            .max(1),
        workers: args.queue_workers.max(1),
        rounds: if args.quick { 1 } else { 4 },
    };
    let recovery_effort = RecoveryEffort {
        runs: args
            .recovery_runs
            .unwrap_or(if args.quick { 2 } else { 5 })
            .max(1),
        lease: Duration::from_secs(1),
        step_delay: Duration::from_millis(100),
    };
    let scaling_effort = scaling::ScalingEffort {
        reads: effort,
        longest_history: args
            .longest_history
            .unwrap_or(if args.quick { 1000 } else { 10_000 })
            .max(10),
        held_prefix: held_prefix::HeldPrefixEffort {
            longest_messages: args
                .longest_messages
                .unwrap_or(if args.quick { 2000 } else { 100_000 })
                .max(held_prefix::BASELINE_MESSAGES),
            journal_entries: args
                .journal_entries
                .unwrap_or(if args.quick { 1000 } else { 10_000 }),
            reads: args
                .history_reads
                .unwrap_or(if args.quick { 4 } else { 20 })
                .max(1),
        },
        conversations: args
            .conversations
            .unwrap_or(if args.quick { 1 } else { 3 })
            .max(1),
        conversation_length: 1000,
    };
    let mut scenarios = args.scenarios.clone();
    scenarios.sort();
    scenarios.dedup();
    let mut concurrencies = vec![1];
    if args.concurrency > 1 {
        concurrencies.push(args.concurrency);
    }
    let mut stores = args.stores.clone();
    stores.retain(|kind| !matches!(kind, Kind::Raw | Kind::RawSqlite | Kind::Cached));
    stores.sort();
    stores.dedup();
    let options = StoreOptions {
        pool_size: args.pool_size.unwrap_or(StoreOptions::default().pool_size),
        ..StoreOptions::default()
    };

    // Found before anything is measured, so a missing binary fails the run at once.
    let binary = if scenarios
        .iter()
        .any(|scenario| matches!(scenario, Scenario::Recovery | Scenario::Tracing))
    {
        Some(CheckpointdBinary::locate(args.checkpointd_bin.as_deref())?)
    } else {
        None
    };
    let binary = binary.as_ref();

    let admin = pg_connect(&args.postgres)
        .await
        .map_err(|error| format!("{error} (bench measures on Postgres; pass --postgres URL)"))?;
    let version: String = admin.query_one("SHOW server_version", &[]).await?.get(0);
    report::print_header(
        &args.postgres,
        &version,
        &scenarios,
        effort,
        &concurrencies,
        &options,
    );

    let schemas = Schemas::new(&admin, &args.postgres);
    let scratch = std::env::temp_dir().join(format!("checkpointd-bench-{}", std::process::id()));
    let started = Instant::now();
    let mut targets = targets::Targets::default();
    let mut outcome = Ok(());
    for scenario in scenarios {
        eprintln!(
            "bench: scenario {scenario:?} ... ({:.0?} elapsed)",
            started.elapsed()
        );
        let result = match scenario {
            Scenario::Core => {
                run_core(
                    &schemas,
                    scratch.clone(),
                    &stores,
                    &options,
                    effort,
                    &concurrencies,
                    &mut targets,
                )
                .await
            }
            Scenario::Queue => tasks::run_queue(&schemas, &options, queue_effort)
                .await
                .map(|results| tasks::print_queue(&results, queue_effort)),
            Scenario::Recovery => {
                let binary = binary.ok_or("the recovery scenario needs the checkpointd binary")?;
                tasks::run_recovery(&schemas, binary, &options, recovery_effort)
                    .await
                    .map(|runs| tasks::print_recovery(&runs, recovery_effort))
            }
            Scenario::Cache => cache::run_cache(&schemas, &options, effort, &args.redis)
                .await
                .map(|results| cache::print_cache(&results, &mut targets)),
            Scenario::Identity => identity::run_identity(&schemas, &options, effort)
                .await
                .map(|result| identity::print(&result, effort, &mut targets)),
            Scenario::Tracing => {
                let binary = binary.ok_or("the tracing scenario needs the checkpointd binary")?;
                scaling::run_tracing(&schemas, binary, effort)
                    .await
                    .map(|results| overhead::print(&results, effort, &mut targets))
            }
            Scenario::History => scaling::run_history(&schemas, &scratch, &options, scaling_effort)
                .await
                .map(|results| {
                    history::print(&results.checkpoints, effort);
                    held_prefix::print(
                        &results.held_prefix,
                        scaling_effort.held_prefix,
                        &mut targets,
                    );
                }),
            Scenario::Languages => {
                let effort = languages::LanguagesEffort {
                    iterations: effort.iterations,
                    rounds: effort.rounds * 2,
                    warmup: effort.warmup * 10,
                };
                let external = languages::ExternalClient::in_repository(&args.python, &args.node);
                languages::run_languages(&schemas, &options, &external, effort)
                    .await
                    .map(|results| languages::print(&results, effort))
            }
            Scenario::Pooler => {
                let target = pooler::PoolerTarget {
                    postgres: &args.postgres,
                    pgbouncer: &args.pgbouncer,
                };
                pooler::run_pooler(target, &options, effort, args.concurrency.max(2))
                    .await
                    .map(|result| pooler::print(&result))
            }
            Scenario::Conversation => {
                scaling::run_conversation(&schemas, &scratch, &options, scaling_effort)
                    .await
                    .map(|points| conversation::print(&points, scaling_effort.conversations))
            }
        };
        if let Err(error) = result {
            outcome = Err(format!("scenario {scenario:?}: {error}").into());
            break;
        }
    }
    targets.print();
    eprintln!("bench: all done in {:.1?}", started.elapsed());
    schemas.drop_all().await;
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

async fn run_core(
    schemas: &Schemas<'_>,
    scratch: PathBuf,
    stores: &[Kind],
    options: &StoreOptions,
    effort: Effort,
    concurrencies: &[usize],
    targets: &mut targets::Targets,
) -> Result<(), BoxError> {
    let store_schema = schemas.create().await?;
    let raw_schema = schemas.create().await?;
    std::fs::create_dir_all(&scratch)?;
    measure(
        Setup {
            admin: schemas.admin,
            base: schemas.base,
            store_schema: &store_schema,
            raw_schema: &raw_schema,
            scratch,
            stores,
            options,
            effort,
            concurrencies,
        },
        targets,
    )
    .await
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

async fn measure(setup: Setup<'_>, targets: &mut targets::Targets) -> Result<(), BoxError> {
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
            Kind::Memory | Kind::Raw | Kind::RawSqlite | Kind::Cached => "memory://".to_owned(),
        };
        let server = InProcessServer::start(&url, setup.options).await?;
        contenders.push(Contender {
            kind,
            target: Target::Grpc { addr: server.addr },
        });
        servers.push(server);
    }
    // The SQLite store's floor: raw statements on a file of its own with the store's PRAGMAs,
    // at one client only (the throughput targets are judged on Postgres).
    if setup.stores.contains(&Kind::Sqlite) {
        let path = setup.scratch.join("raw_bench.db");
        clients::create_raw_sqlite(path.clone()).await?;
        contenders.push(Contender {
            kind: Kind::RawSqlite,
            target: Target::RawSqlite { path },
        });
    }

    let mut results = Vec::new();
    for size in SIZES {
        for &clients in setup.concurrencies {
            let contenders: Vec<Contender> = contenders
                .iter()
                .filter(|contender| clients == 1 || contender.kind != Kind::RawSqlite)
                .cloned()
                .collect();
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
    floor::print(&results, many, targets);
    report::print_summary(&results);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::clients::{InProcessServer, Op};
    use super::scenario::{self, Contender, Effort, Kind, Target};
    use super::*;

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
