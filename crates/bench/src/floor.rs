//! The floor a gRPC service over its database can reach, measured in the core run itself: one
//! hop to the service (the in-memory store's p50) plus one statement on the store's own database
//! (raw Postgres INSERT or SELECT p50 for the Postgres store; raw SQLite INSERT or SELECT p50, on
//! a WAL file with synchronous=FULL, for the SQLite store). Save and LoadLatest on the durable
//! stores are printed against their own floor, and 32-client throughput against raw Postgres's.

use super::clients::Op;
use super::report::{find, size_label};
use super::scenario::{Kind, Measurement};
use super::stats::{ms, ratio};
use super::targets::{Row, Targets};

/// The state sizes the floor targets are judged at.
pub const FLOOR_SIZES: [usize; 2] = [1024, 10 * 1024];
/// The state size the throughput targets are judged at.
const THROUGHPUT_SIZE: usize = 1024;
/// The durable stores judged against a floor.
const FLOOR_STORES: [Kind; 2] = [Kind::Postgres, Kind::Sqlite];

/// The raw contender whose statement is `store`'s half of the floor: the same database the
/// store writes to, with nothing of checkpointd in between.
pub fn floor_statement(store: Kind) -> Option<Kind> {
    match store {
        Kind::Postgres => Some(Kind::Raw),
        Kind::Sqlite => Some(Kind::RawSqlite),
        Kind::Memory | Kind::Raw | Kind::RawSqlite | Kind::Cached => None,
    }
}

/// The floor of `store`'s `op` at `size` with one client: the memory store's p50 (one hop, no
/// database) plus the p50 of the raw statement on `store`'s database (one statement, no
/// service), in milliseconds; `None` when either is missing.
pub fn floor_ms(results: &[Measurement], store: Kind, op: Op, size: usize) -> Option<(f64, f64)> {
    let p50 = |kind: Kind| find(results, kind, op, size, 1).map(|m| ms(m.summary.p50));
    Some((p50(Kind::Memory)?, p50(floor_statement(store)?)?))
}

/// What the statement half of `store`'s floor is, for the table.
fn statement_label(store: Kind, op: Op) -> String {
    let database = match store {
        Kind::Sqlite => "sqlite",
        _ => "postgres",
    };
    format!("{database} {}", Kind::Raw.op_label(op))
}

/// The floor table, and the throughput ratios at `many` clients; both recorded in `targets`.
pub fn print(results: &[Measurement], many: usize, targets: &mut Targets) {
    println!();
    println!(
        "== Floor: one gRPC hop (memory store p50) + one statement on the store's database (raw p50), 1 client, same run =="
    );
    println!(
        "{:<7} {:<11} {:<9} {:<16} {:>8} {:>8} {:>9} {:>8} {:>8} {:>9}",
        "size",
        "op",
        "store",
        "floor statement",
        "hop ms",
        "sql ms",
        "floor ms",
        "p50 ms",
        "/floor",
        "target"
    );
    let mut any = false;
    for (op, row) in [(Op::Write, Row::SaveFloor), (Op::Read, Row::LoadFloor)] {
        for size in FLOOR_SIZES {
            for store in FLOOR_STORES {
                let Some(m) = find(results, store, op, size, 1) else {
                    continue;
                };
                let Some((hop, sql)) = floor_ms(results, store, op, size) else {
                    continue;
                };
                any = true;
                let floor = hop + sql;
                let p50 = ms(m.summary.p50);
                let value = ratio(p50, floor);
                targets.record(
                    row,
                    format!("{} {}", store_name(store), size_label(size)),
                    value,
                );
                println!(
                    "{:<7} {:<11} {:<9} {:<16} {hop:>8.3} {sql:>8.3} {floor:>9.3} {p50:>8.3} {:>7.2}x {:>9}",
                    size_label(size),
                    store.op_label(op),
                    store_name(store),
                    statement_label(store, op),
                    value,
                    row.bound().label()
                );
            }
        }
    }
    if any {
        println!(
            "(postgres: a prepared autocommit statement over tokio-postgres on the same Postgres; sqlite: \
             a cached autocommit statement over rusqlite on spawn_blocking, WAL, synchronous=FULL, \
             as the store opens its file)"
        );
    } else {
        println!(
            "(needs the memory store in --stores: its p50 is the hop of the floor; the sqlite floor's \
             statement runs when sqlite is in --stores)"
        );
    }

    if many <= 1 {
        return;
    }
    println!();
    println!(
        "== Throughput against raw SQL, {many} clients, {} ==",
        size_label(THROUGHPUT_SIZE)
    );
    println!(
        "{:<11} {:>10} {:>10} {:>8} {:>10} {:>8} {:>9}",
        "op", "raw ops/s", "postgres", "/raw", "sqlite", "/raw", "target"
    );
    for (op, row) in [
        (Op::Write, Row::SaveThroughput),
        (Op::Read, Row::LoadThroughput),
    ] {
        let Some(raw) = find(results, Kind::Raw, op, THROUGHPUT_SIZE, many) else {
            continue;
        };
        let raw_ops = raw.summary.ops_per_sec;
        let mut cells = Vec::new();
        for kind in [Kind::Postgres, Kind::Sqlite] {
            match find(results, kind, op, THROUGHPUT_SIZE, many) {
                Some(m) => {
                    let value = ratio(m.summary.ops_per_sec, raw_ops);
                    // The target is about checkpointd on the same Postgres as the raw SQL;
                    // SQLite is shown for scale.
                    if kind == Kind::Postgres {
                        targets.record(row, "postgres", value);
                    }
                    cells.push(format!("{:>10.0} {:>7.2}x", m.summary.ops_per_sec, value));
                }
                None => cells.push(format!("{:>10} {:>8}", "-", "-")),
            }
        }
        println!(
            "{:<11} {raw_ops:>10.0} {} {:>9}",
            Kind::Postgres.op_label(op),
            cells.join(" "),
            row.bound().label()
        );
    }
    println!(
        "(throughput targets judge postgres, against raw SQL on the same Postgres; sqlite for scale)"
    );
}

fn store_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Postgres => "postgres",
        Kind::Sqlite => "sqlite",
        Kind::Memory => "memory",
        Kind::Raw => "raw",
        Kind::RawSqlite => "raw sqlite",
        Kind::Cached => "postgres + redis",
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::stats::Summary;

    fn measured(
        kind: Kind,
        op: Op,
        size: usize,
        clients: usize,
        p50_us: u64,
        ops: f64,
    ) -> Measurement {
        Measurement {
            kind,
            op,
            size,
            clients,
            summary: Summary {
                ops: 10,
                p50: Duration::from_micros(p50_us),
                p99: Duration::from_micros(p50_us * 2),
                ops_per_sec: ops,
            },
        }
    }

    #[test]
    fn the_floor_is_the_memory_hop_plus_the_raw_statement() {
        let results = [
            measured(Kind::Raw, Op::Write, 1024, 1, 200, 0.0),
            measured(Kind::Memory, Op::Write, 1024, 1, 60, 0.0),
            measured(Kind::Postgres, Op::Write, 1024, 1, 290, 0.0),
            measured(Kind::Raw, Op::Write, 1024, 32, 900, 1000.0),
            measured(Kind::Postgres, Op::Write, 1024, 32, 900, 700.0),
        ];
        let (hop, sql) = floor_ms(&results, Kind::Postgres, Op::Write, 1024).unwrap();
        assert!((hop - 0.060).abs() < 1e-9 && (sql - 0.200).abs() < 1e-9);
        assert!(floor_ms(&results, Kind::Postgres, Op::Read, 1024).is_none());
        // No raw SQLite statement measured: SQLite has no floor, not Postgres's.
        assert!(floor_ms(&results, Kind::Sqlite, Op::Write, 1024).is_none());

        let mut targets = Targets::default();
        print(&results, 32, &mut targets);
        let save = targets.verdict(Row::SaveFloor).unwrap();
        assert_eq!(save.all.len(), 1);
        assert!((save.worst.value - 290.0 / 260.0).abs() < 1e-9);
        assert!(save.met);
        let throughput = targets.verdict(Row::SaveThroughput).unwrap();
        assert!((throughput.worst.value - 0.7).abs() < 1e-9);
        assert!(!throughput.met);
    }

    #[test]
    fn each_store_is_judged_against_a_floor_on_its_own_database() {
        let results = [
            measured(Kind::Memory, Op::Write, 1024, 1, 60, 0.0),
            measured(Kind::Raw, Op::Write, 1024, 1, 200, 0.0),
            measured(Kind::RawSqlite, Op::Write, 1024, 1, 1000, 0.0),
            measured(Kind::Postgres, Op::Write, 1024, 1, 290, 0.0),
            measured(Kind::Sqlite, Op::Write, 1024, 1, 1200, 0.0),
            measured(Kind::Memory, Op::Read, 10 * 1024, 1, 50, 0.0),
            measured(Kind::Raw, Op::Read, 10 * 1024, 1, 150, 0.0),
            measured(Kind::RawSqlite, Op::Read, 10 * 1024, 1, 30, 0.0),
            measured(Kind::Postgres, Op::Read, 10 * 1024, 1, 230, 0.0),
            measured(Kind::Sqlite, Op::Read, 10 * 1024, 1, 100, 0.0),
            // Throughput stays judged on Postgres against raw Postgres, SQLite for scale.
            measured(Kind::Raw, Op::Write, 1024, 32, 900, 1000.0),
            measured(Kind::Postgres, Op::Write, 1024, 32, 900, 900.0),
            measured(Kind::Sqlite, Op::Write, 1024, 32, 900, 100.0),
        ];
        let (hop, sql) = floor_ms(&results, Kind::Sqlite, Op::Write, 1024).unwrap();
        assert!((hop - 0.060).abs() < 1e-9 && (sql - 1.000).abs() < 1e-9);
        let (_, sql) = floor_ms(&results, Kind::Postgres, Op::Write, 1024).unwrap();
        assert!((sql - 0.200).abs() < 1e-9);
        let (hop, sql) = floor_ms(&results, Kind::Sqlite, Op::Read, 10 * 1024).unwrap();
        assert!((hop - 0.050).abs() < 1e-9 && (sql - 0.030).abs() < 1e-9);
        assert!(floor_ms(&results, Kind::Memory, Op::Write, 1024).is_none());

        let mut targets = Targets::default();
        print(&results, 32, &mut targets);
        let save = targets.verdict(Row::SaveFloor).unwrap();
        let value = |verdict: &crate::targets::Verdict<'_>, label: &str| {
            verdict
                .all
                .iter()
                .find(|m| m.label == label)
                .map(|m| m.value)
                .unwrap()
        };
        assert_eq!(save.all.len(), 2);
        assert!((value(&save, "postgres 1 KB") - 290.0 / 260.0).abs() < 1e-9);
        // 1.2 ms against 0.06 + 1.0, not against Postgres's 0.26 ms floor.
        assert!((value(&save, "sqlite 1 KB") - 1200.0 / 1060.0).abs() < 1e-9);
        assert!(save.met);
        let load = targets.verdict(Row::LoadFloor).unwrap();
        assert_eq!(load.all.len(), 2);
        assert!((value(&load, "postgres 10 KB") - 230.0 / 200.0).abs() < 1e-9);
        assert!((value(&load, "sqlite 10 KB") - 100.0 / 80.0).abs() < 1e-9);
        assert_eq!(load.worst.label, "sqlite 10 KB");
        assert!(!load.met);
        let throughput = targets.verdict(Row::SaveThroughput).unwrap();
        assert_eq!(throughput.all.len(), 1);
        assert!((throughput.worst.value - 0.9).abs() < 1e-9);
    }
}
