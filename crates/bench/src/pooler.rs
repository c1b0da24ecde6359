//! What a transaction-mode pooler costs: Save and LoadLatest p50 with one client, and
//! throughput with many, of a server reaching Postgres through PgBouncer in transaction mode
//! (`--postgres-statements unnamed`) against one connected directly (`prepared`), both in this
//! process over one database, taking turns round by round, reported as pooled / direct.
//!
//! The database is one of its own (`bench_pool_<pid>`), created and dropped through `--postgres`:
//! PgBouncer refuses the `options` parameter a schema URL needs. `--pgbouncer` must point at the
//! same Postgres (`.ci/pgbouncer.sh` starts one on 6432).

use std::sync::Arc;

use super::BoxError;
use super::clients::{BenchClient, GrpcClient, InProcessServer, Op, pg_connect, run_batch};
use super::overhead::take_turns;
use super::payload::agent_state;
use super::scenario::Effort;
use super::stats::{Samples, Summary, ms, ratio};
use checkpointd_storage::store::{PostgresStatements, StoreOptions};
use checkpointd_testkit::url_with_database;

const STATE_BYTES: usize = 1024;
/// One latency difference is tens of microseconds: finer interleaving than the core scenario.
const ROUNDS_PER_ROUND: usize = 4;

/// Direct first, pooled second, in every pair.
#[derive(Clone, Debug)]
pub struct PoolerResult {
    pub save: [Summary; 2],
    pub load: [Summary; 2],
    pub many_save: [Summary; 2],
    pub many_load: [Summary; 2],
    pub clients: usize,
    pub pool_size: usize,
}

/// Where the two servers connect.
pub struct PoolerTarget<'a> {
    /// Postgres, directly; the database is created and dropped through it.
    pub postgres: &'a str,
    /// PgBouncer in transaction mode in front of the same Postgres.
    pub pgbouncer: &'a str,
}

pub async fn run_pooler(
    target: PoolerTarget<'_>,
    options: &StoreOptions,
    effort: Effort,
    clients: usize,
) -> Result<PoolerResult, BoxError> {
    let admin = pg_connect(target.postgres).await?;
    let name = format!("bench_pool_{}", std::process::id());
    // Two calls: several statements in one would run as one transaction, which CREATE
    // DATABASE refuses.
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await?;
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await?;
    let result = measure(&target, &name, options, effort, clients).await;
    // Both servers are stopped by now; FORCE ends PgBouncer's idle server connections to it.
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await?;
    result
}

async fn measure(
    target: &PoolerTarget<'_>,
    name: &str,
    options: &StoreOptions,
    effort: Effort,
    many: usize,
) -> Result<PoolerResult, BoxError> {
    let direct_url = url_with_database(target.postgres, name);
    let pooled_url = url_with_database(target.pgbouncer, name);
    let direct = InProcessServer::start(
        &direct_url,
        &StoreOptions {
            statements: PostgresStatements::Prepared,
            ..options.clone()
        },
    )
    .await?;
    let pooled = InProcessServer::start(
        &pooled_url,
        &StoreOptions {
            statements: PostgresStatements::Unnamed,
            listen_url: Some(direct_url.clone()),
            ..options.clone()
        },
    )
    .await?;
    let state = Arc::new(agent_state(STATE_BYTES, 17));
    let run_id = |name: &str, index: usize| format!("bench-pooler-{name}-{index}");
    let mut pair = [
        GrpcClient::connect(direct.addr, run_id("direct", 0), state.clone()).await?,
        GrpcClient::connect(pooled.addr, run_id("pooled", 0), state.clone()).await?,
    ];
    // Warm-up: connections, prepared statements, learned parameter types, the first run rows.
    for client in &mut pair {
        for _ in 0..effort.warmup.max(1) * 5 {
            client.write_next().await?;
            client.read_last().await?;
        }
    }
    let rounds = effort.rounds * ROUNDS_PER_ROUND;
    let per_round = (effort.iterations * 2).div_ceil(rounds).max(1);
    let saves = take_turns(&mut pair, rounds, per_round, async |client| {
        client.write_next().await
    })
    .await?;
    let loads = take_turns(&mut pair, rounds, per_round, async |client| {
        client.read_last().await
    })
    .await?;

    // Many clients: each server's batch in turn, alternating which goes first.
    let per_client = (effort.iterations * 4).div_ceil(many).max(1);
    let mut groups: [Vec<Box<dyn BenchClient>>; 2] = [Vec::new(), Vec::new()];
    for (which, (server, label)) in [(&direct, "direct"), (&pooled, "pooled")]
        .into_iter()
        .enumerate()
    {
        for index in 1..=many {
            let mut client =
                GrpcClient::connect(server.addr, run_id(label, index), state.clone()).await?;
            client.write_next().await?;
            groups[which].push(Box::new(client));
        }
    }
    let mut many_save = [Samples::default(), Samples::default()];
    let mut many_load = [Samples::default(), Samples::default()];
    for round in 0..effort.rounds.max(1) {
        for offset in 0..2 {
            let which = (round + offset) % 2;
            for (op, samples) in [(Op::Write, &mut many_save), (Op::Read, &mut many_load)] {
                let batch = run_batch(std::mem::take(&mut groups[which]), op, per_client).await?;
                samples[which].add_batch(&batch.latencies, batch.wall);
                groups[which] = batch.clients;
            }
        }
    }
    drop(groups);
    direct.stop().await?;
    pooled.stop().await?;
    Ok(PoolerResult {
        save: [saves[0].summary(), saves[1].summary()],
        load: [loads[0].summary(), loads[1].summary()],
        many_save: [many_save[0].summary(), many_save[1].summary()],
        many_load: [many_load[0].summary(), many_load[1].summary()],
        clients: many,
        pool_size: options.pool_size,
    })
}

pub fn print(result: &PoolerResult) {
    println!();
    println!(
        "== Behind PgBouncer: transaction mode (--postgres-statements unnamed) against direct \
         (prepared), postgres, 1 KB state, pool {} per server ==",
        result.pool_size
    );
    println!(
        "{:<22} {:>11} {:>11} {:>11} {:>11} {:>14}",
        "1 client", "direct p50", "pooled p50", "direct p99", "pooled p99", "pooled/direct"
    );
    for (call, [direct, pooled]) in [("Save", result.save), ("LoadLatest", result.load)] {
        println!(
            "{call:<22} {:>11.3} {:>11.3} {:>11.3} {:>11.3} {:>13.3}x",
            ms(direct.p50),
            ms(pooled.p50),
            ms(direct.p99),
            ms(pooled.p99),
            ratio(ms(pooled.p50), ms(direct.p50)),
        );
    }
    println!(
        "{:<22} {:>11} {:>11} {:>11} {:>11} {:>14}",
        format!("{} clients", result.clients),
        "direct op/s",
        "pooled op/s",
        "direct p50",
        "pooled p50",
        "pooled/direct"
    );
    for (call, [direct, pooled]) in [("Save", result.many_save), ("LoadLatest", result.many_load)] {
        println!(
            "{call:<22} {:>11.0} {:>11.0} {:>11.3} {:>11.3} {:>13.3}x",
            direct.ops_per_sec,
            pooled.ops_per_sec,
            ms(direct.p50),
            ms(pooled.p50),
            ratio(pooled.ops_per_sec, direct.ops_per_sec),
        );
    }
    println!("(times in ms; the ratio is of p50 with one client, of throughput with many)");
}
