//! Plain-text tables of the measurements and the summary of ratios against the targets.

use std::time::Duration;

use super::Scenario;
use super::clients::Op;
use super::scenario::{Effort, Kind, Measurement};
use super::stats::{ms, ratio};
use super::storage::StorageReport;
use checkpointd_core::secret::redact_url;
use checkpointd_storage::store::StoreOptions;

/// The budget every durable Save's p99 must stay within, in milliseconds.
pub const SAVE_BUDGET_MS: f64 = 50.0;

pub fn size_label(size: usize) -> String {
    if size >= 1024 {
        format!("{} KB", size / 1024)
    } else {
        format!("{size} B")
    }
}

fn clients_label(clients: usize) -> String {
    if clients == 1 {
        "1 client".to_owned()
    } else {
        format!("{clients} clients")
    }
}

pub(super) fn find(
    results: &[Measurement],
    kind: Kind,
    op: Op,
    size: usize,
    clients: usize,
) -> Option<&Measurement> {
    results
        .iter()
        .find(|m| m.kind == kind && m.op == op && m.size == size && m.clients == clients)
}

fn times(value: f64) -> String {
    if value.is_nan() {
        "-".to_owned()
    } else {
        format!("{value:.2}x")
    }
}

/// One table per operation and client count: every contender at every size, next to raw SQL.
pub fn print_tables(results: &[Measurement], sizes: &[usize], concurrencies: &[usize]) {
    for op in [Op::Write, Op::Read] {
        for &clients in concurrencies {
            let title = match op {
                Op::Write => "Save vs raw INSERT",
                Op::Read => "LoadLatest vs raw SELECT",
            };
            println!();
            println!("== {title}, {} ==", clients_label(clients));
            println!(
                "{:<7} {:<21} {:<10} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9}",
                "size",
                "contender",
                "op",
                "p50 ms",
                "p99 ms",
                "ops/s",
                "p50/raw",
                "+p50 ms",
                "ops/raw"
            );
            for &size in sizes {
                let raw = find(results, Kind::Raw, op, size, clients).map(|m| m.summary);
                let mut first = true;
                for m in results
                    .iter()
                    .filter(|m| m.op == op && m.size == size && m.clients == clients)
                {
                    let s = m.summary;
                    let (vs_raw, extra, ops_vs_raw) = match raw {
                        Some(raw) if m.kind != Kind::Raw => (
                            times(ratio(ms(s.p50), ms(raw.p50))),
                            format!("{:+.3}", ms(s.p50) - ms(raw.p50)),
                            times(ratio(s.ops_per_sec, raw.ops_per_sec)),
                        ),
                        _ => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
                    };
                    println!(
                        "{:<7} {:<21} {:<10} {:>8.3} {:>8.3} {:>9.0} {:>9} {:>9} {:>9}",
                        if first {
                            size_label(size)
                        } else {
                            String::new()
                        },
                        m.kind.label(),
                        m.kind.op_label(op),
                        ms(s.p50),
                        ms(s.p99),
                        s.ops_per_sec,
                        vs_raw,
                        extra,
                        ops_vs_raw,
                    );
                    first = false;
                }
            }
        }
    }
}

pub(super) fn verdict(pass: bool) -> &'static str {
    if pass { "PASS" } else { "MISS" }
}

/// The Save budget and the largest Save overhead over raw INSERT; the ratios against issue
/// 20's targets are in the floor block. Informational: nothing here changes the exit code.
pub fn print_summary(results: &[Measurement]) {
    println!();
    println!("== Summary: checkpointd's durable Saves against the budget and raw INSERT ==");
    let durable = || {
        results
            .iter()
            .filter(|m| m.op == Op::Write && matches!(m.kind, Kind::Postgres | Kind::Sqlite))
    };
    let mut client_counts: Vec<usize> = results.iter().map(|m| m.clients).collect();
    client_counts.sort_unstable();
    client_counts.dedup();
    for clients in client_counts {
        let worst = durable()
            .filter(|m| m.clients == clients)
            .max_by_key(|m| m.summary.p99);
        let Some(worst) = worst else { continue };
        let worst_ms = ms(worst.summary.p99);
        let raw_p99 = find(results, Kind::Raw, Op::Write, worst.size, clients)
            .map_or(String::new(), |raw| {
                format!(" (raw INSERT p99 there: {:.2} ms)", ms(raw.summary.p99))
            });
        println!(
            "  worst durable Save p99, {}: {worst_ms:.2} ms ({}, {}){raw_p99}; budget {SAVE_BUDGET_MS} ms  {}",
            clients_label(clients),
            worst.kind.label(),
            size_label(worst.size),
            verdict(worst_ms <= SAVE_BUDGET_MS)
        );
    }
    let overhead = durable()
        .filter(|m| m.kind == Kind::Postgres)
        .filter_map(|m| {
            find(results, Kind::Raw, Op::Write, m.size, m.clients)
                .map(|raw| (m, m.summary.p50.saturating_sub(raw.summary.p50)))
        })
        .max_by_key(|(_, extra)| *extra);
    if let Some((m, extra)) = overhead {
        println!(
            "  largest Save p50 overhead over INSERT (postgres): {:.3} ms ({}, {})",
            ms(extra),
            size_label(m.size),
            clients_label(m.clients)
        );
    }
}

pub fn print_storage(report: &StorageReport, columns: &[String]) {
    println!();
    println!(
        "== Large-column storage: raw INSERT / SELECT of a {} agent state, 1 client ==",
        size_label(super::storage::SIZE)
    );
    println!(
        "(server default_toast_compression = {})",
        report.default_compression
    );
    println!(
        "{:<17} {:>11} {:>8} {:>11} {:>8} {:>13}",
        "column storage", "INSERT p50", "vs pglz", "SELECT p50", "vs pglz", "stored bytes"
    );
    let base = report.variants.first();
    for variant in &report.variants {
        let vs = |pick: fn(&super::storage::Variant) -> Duration| {
            base.map_or(f64::NAN, |base| ratio(ms(pick(variant)), ms(pick(base))))
        };
        println!(
            "{:<17} {:>8.3} ms {:>8} {:>8.3} ms {:>8} {:>13.0}",
            variant.label,
            ms(variant.write.p50),
            times(vs(|v| v.write.p50)),
            ms(variant.read.p50),
            times(vs(|v| v.read.p50)),
            variant.stored_bytes,
        );
    }
    if let Some(reason) = &report.lz4_unavailable {
        println!("lz4 left out: {reason}");
    }
    if !columns.is_empty() {
        println!("checkpointd's bytea columns on this server:");
        for column in columns {
            println!("  {column}");
        }
    }
}

pub fn print_header(
    url: &str,
    version: &str,
    scenarios: &[Scenario],
    effort: Effort,
    concurrencies: &[usize],
    options: &StoreOptions,
) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("checkpointd-bench");
    println!("  postgres     {} (server {version})", redact_url(url));
    println!("  machine      {cores} cores{}", memory_label());
    println!(
        "  scenarios    {}",
        scenarios
            .iter()
            .map(|s| format!("{s:?}").to_lowercase())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !scenarios.contains(&Scenario::Core) {
        println!(
            "  pool         checkpointd postgres pool {} connections",
            options.pool_size
        );
        return;
    }
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
