//! One measurement scenario: every contender at one state size and client count, interleaved
//! in rounds so that a noisy neighbour hurts them all alike.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use super::BoxError;
use super::clients::{BenchClient, GrpcClient, Op, RawClient, RawSqliteClient, run_batch};
use super::payload::agent_state;
use super::stats::{Samples, Summary};

/// Who is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Kind {
    /// Raw tokio-postgres statements: the baseline.
    #[value(skip)]
    Raw,
    /// Raw rusqlite statements on a WAL file with synchronous=FULL: the SQLite store's floor
    /// (core scenario, 1 client).
    #[value(skip)]
    RawSqlite,
    /// checkpointd over gRPC, on each store.
    Postgres,
    Sqlite,
    Memory,
    /// checkpointd on Postgres with the Redis cache in front (the cache scenario only).
    #[value(skip)]
    Cached,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Raw => "raw SQL, postgres",
            Kind::RawSqlite => "raw SQL, sqlite",
            Kind::Postgres => "checkpointd postgres",
            Kind::Sqlite => "checkpointd sqlite",
            Kind::Memory => "checkpointd memory",
            Kind::Cached => "checkpointd postgres + redis",
        }
    }

    pub fn op_label(self, op: Op) -> &'static str {
        match (self, op) {
            (Kind::Raw | Kind::RawSqlite, Op::Write) => "INSERT",
            (Kind::Raw | Kind::RawSqlite, Op::Read) => "SELECT",
            (_, Op::Write) => "Save",
            (_, Op::Read) => "LoadLatest",
        }
    }
}

/// Where a contender's clients connect.
#[derive(Clone)]
pub enum Target {
    /// A Postgres URL and the table raw statements use.
    Raw { url: String, table: String },
    /// A SQLite file (in WAL mode, holding `raw_bench`) that raw statements use.
    RawSqlite { path: PathBuf },
    /// An in-process checkpointd server.
    Grpc { addr: SocketAddr },
}

#[derive(Clone)]
pub struct Contender {
    pub kind: Kind,
    pub target: Target,
}

impl Contender {
    async fn clients(
        &self,
        scenario: &str,
        count: usize,
        state: &Arc<Vec<u8>>,
    ) -> Result<Vec<Box<dyn BenchClient>>, BoxError> {
        let mut clients: Vec<Box<dyn BenchClient>> = Vec::with_capacity(count);
        for index in 0..count {
            let run_id = format!("bench-{scenario}-{index}");
            clients.push(match &self.target {
                Target::Raw { url, table } => {
                    Box::new(RawClient::connect(url, table, run_id, state.clone()).await?)
                }
                Target::RawSqlite { path } => {
                    Box::new(RawSqliteClient::open(path.clone(), run_id, state.clone()).await?)
                }
                Target::Grpc { addr } => {
                    Box::new(GrpcClient::connect(*addr, run_id, state.clone()).await?)
                }
            });
        }
        Ok(clients)
    }
}

/// How much each scenario does.
#[derive(Clone, Copy, Debug)]
pub struct Effort {
    /// Operations per contender per measurement with one client.
    pub iterations: usize,
    /// Batches each contender's many-client measurement is split into, interleaved with the
    /// others'. One client uses three times as many, shorter rounds: its batches are quick, and
    /// finer interleaving keeps a burst of slow disk flushes from landing on one contender.
    pub rounds: usize,
    /// Unrecorded operations per client before measuring (connections, caches, plans).
    pub warmup: usize,
}

impl Effort {
    pub fn rounds_for(&self, clients: usize) -> usize {
        if clients <= 1 {
            self.rounds * 3
        } else {
            self.rounds
        }
    }

    /// Operations each client does per round. Many clients do four times the work of one in
    /// total, so that the throughput figure is not dominated by ramp-up and tail.
    pub fn per_round(&self, clients: usize) -> usize {
        let total = if clients <= 1 {
            self.iterations
        } else {
            self.iterations * 4
        };
        total
            .div_ceil(clients)
            .div_ceil(self.rounds_for(clients))
            .max(1)
    }

    /// Operations each contender's measurement records.
    pub fn ops(&self, clients: usize) -> usize {
        self.per_round(clients) * self.rounds_for(clients) * clients
    }
}

/// One contender's result for one operation in one scenario.
#[derive(Clone, Copy, Debug)]
pub struct Measurement {
    pub kind: Kind,
    pub op: Op,
    pub size: usize,
    pub clients: usize,
    pub summary: Summary,
}

/// Writes then reads, each as interleaved rounds over every contender; the reads find the
/// steps the writes left.
pub async fn run(
    contenders: &[Contender],
    size: usize,
    clients: usize,
    effort: Effort,
) -> Result<Vec<Measurement>, BoxError> {
    let state = Arc::new(agent_state(size, size as u64));
    let scenario = format!("{size}b-{clients}c");
    let mut pools = Vec::with_capacity(contenders.len());
    for contender in contenders {
        pools.push(contender.clients(&scenario, clients, &state).await?);
    }
    let mut measurements = Vec::new();
    for op in [Op::Write, Op::Read] {
        let mut samples = vec![Samples::default(); contenders.len()];
        for pool in &mut pools {
            *pool = run_batch(std::mem::take(pool), op, effort.warmup)
                .await?
                .clients;
        }
        for round in 0..effort.rounds_for(clients) {
            // Rotate who goes first, so no contender always follows the same one.
            for offset in 0..contenders.len() {
                let index = (round + offset) % contenders.len();
                let batch = run_batch(
                    std::mem::take(&mut pools[index]),
                    op,
                    effort.per_round(clients),
                )
                .await
                .map_err(|error| {
                    format!(
                        "{} {} failed: {error}",
                        contenders[index].kind.label(),
                        contenders[index].kind.op_label(op)
                    )
                })?;
                samples[index].add_batch(&batch.latencies, batch.wall);
                pools[index] = batch.clients;
            }
        }
        for (contender, samples) in contenders.iter().zip(&samples) {
            measurements.push(Measurement {
                kind: contender.kind,
                op,
                size,
                clients,
                summary: samples.summary(),
            });
        }
    }
    Ok(measurements)
}
