//! The floor a gRPC service over Postgres can reach, measured in the core run itself: one hop to
//! the service (the in-memory store's p50) plus one SQL statement (raw INSERT or SELECT p50).
//! Save and LoadLatest on the durable stores are printed against it, and 32-client throughput
//! against raw SQL's.

use super::clients::Op;
use super::report::{find, size_label};
use super::scenario::{Kind, Measurement};
use super::stats::{ms, ratio};
use super::targets::{Row, Targets};

/// The state sizes the floor targets are judged at.
pub const FLOOR_SIZES: [usize; 2] = [1024, 10 * 1024];
/// The state size the throughput targets are judged at.
const THROUGHPUT_SIZE: usize = 1024;

/// The floor of `op` at `size` with one client: the memory store's p50 (one hop, no database)
/// plus raw SQL's (one statement, no service), in milliseconds; `None` when either is missing.
pub fn floor_ms(results: &[Measurement], op: Op, size: usize) -> Option<(f64, f64)> {
    let p50 = |kind: Kind| find(results, kind, op, size, 1).map(|m| ms(m.summary.p50));
    Some((p50(Kind::Memory)?, p50(Kind::Raw)?))
}

/// The floor table, and the throughput ratios at `many` clients; both recorded in `targets`.
pub fn print(results: &[Measurement], many: usize, targets: &mut Targets) {
    println!();
    println!(
        "== Floor: one gRPC hop (memory store p50) + one SQL statement (raw p50), 1 client, same run =="
    );
    println!(
        "{:<7} {:<11} {:>8} {:>8} {:>9} {:>10} {:>8} {:>10} {:>8} {:>9}",
        "size",
        "op",
        "hop ms",
        "sql ms",
        "floor ms",
        "postgres",
        "/floor",
        "sqlite",
        "/floor",
        "target"
    );
    let mut any = false;
    for (op, row) in [(Op::Write, Row::SaveFloor), (Op::Read, Row::LoadFloor)] {
        for size in FLOOR_SIZES {
            let Some((hop, sql)) = floor_ms(results, op, size) else {
                continue;
            };
            any = true;
            let floor = hop + sql;
            let mut cells = Vec::new();
            for kind in [Kind::Postgres, Kind::Sqlite] {
                match find(results, kind, op, size, 1) {
                    Some(m) => {
                        let p50 = ms(m.summary.p50);
                        let value = ratio(p50, floor);
                        targets.record(
                            row,
                            format!("{} {}", store_name(kind), size_label(size)),
                            value,
                        );
                        cells.push(format!("{p50:>10.3} {:>7.2}x", value));
                    }
                    None => cells.push(format!("{:>10} {:>8}", "-", "-")),
                }
            }
            println!(
                "{:<7} {:<11} {hop:>8.3} {sql:>8.3} {floor:>9.3} {} {:>9}",
                size_label(size),
                Kind::Postgres.op_label(op),
                cells.join(" "),
                row.bound().label()
            );
        }
    }
    if !any {
        println!("(needs the memory store in --stores: its p50 is the hop of the floor)");
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
        let (hop, sql) = floor_ms(&results, Op::Write, 1024).unwrap();
        assert!((hop - 0.060).abs() < 1e-9 && (sql - 0.200).abs() < 1e-9);
        assert!(floor_ms(&results, Op::Read, 1024).is_none());

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
}
