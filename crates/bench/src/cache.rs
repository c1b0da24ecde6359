//! The cache scenario: LoadLatest and Save on Postgres with the Redis cache in front, side by
//! side with Postgres alone (and raw SQL for scale), at the sizes where caching could pay.

use super::BoxError;
use super::clients::{InProcessServer, Op};
use super::report::{size_label, verdict};
use super::scenario::{self, Contender, Effort, Kind, Measurement, Target};
use super::schemas::Schemas;
use super::stats::{ms, ratio};
use super::targets::{Row, Targets};
use checkpointd::cache::CacheCounts;
use checkpointd::config::CacheSettings;
use checkpointd_storage::store::StoreOptions;
use checkpointd_testkit::url_with_schema;

/// State sizes the cache is judged at: one typical, one large.
const CACHE_SIZES: [usize; 2] = [10 * 1024, 100 * 1024];

/// The most the cache may add to a Save's p50, as a fraction.
const SAVE_OVERHEAD_BUDGET: f64 = 0.10;

/// The measurements, and what the cache did over the whole scenario.
pub struct CacheResults {
    pub measurements: Vec<Measurement>,
    pub counts: Option<CacheCounts>,
}

pub async fn run_cache(
    schemas: &Schemas<'_>,
    options: &StoreOptions,
    effort: Effort,
    redis: &str,
) -> Result<CacheResults, BoxError> {
    let raw_url = url_with_schema(schemas.base, &schemas.create().await?);
    let plain_url = url_with_schema(schemas.base, &schemas.create().await?);
    let cached_url = url_with_schema(schemas.base, &schemas.create().await?);
    super::clients::pg_connect(&raw_url)
        .await?
        .batch_execute(
            "CREATE TABLE raw_bench (run text, step bigint, payload bytea, PRIMARY KEY (run, step))",
        )
        .await?;
    let plain = InProcessServer::start(&plain_url, options).await?;
    let cache = CacheSettings {
        prefix: format!("checkpointd-bench-{}", std::process::id()),
        ttl: std::time::Duration::from_secs(600),
        ..CacheSettings::new(redis)
    };
    let cached = InProcessServer::start_cached(&cached_url, options, cache).await?;
    let contenders = [
        Contender {
            kind: Kind::Raw,
            target: Target::Raw {
                url: raw_url,
                table: "raw_bench".to_owned(),
            },
        },
        Contender {
            kind: Kind::Postgres,
            target: Target::Grpc { addr: plain.addr },
        },
        Contender {
            kind: Kind::Cached,
            target: Target::Grpc { addr: cached.addr },
        },
    ];
    let mut results = Vec::new();
    for size in CACHE_SIZES {
        eprintln!("bench: cache, {:>6}, 1 client ...", size_label(size));
        results.extend(scenario::run(&contenders, size, 1, effort).await?);
    }
    let counts = cached.cache_stats.as_ref().map(|stats| stats.counts());
    plain.stop().await?;
    cached.stop().await?;
    Ok(CacheResults {
        measurements: results,
        counts,
    })
}

pub fn print_cache(cache: &CacheResults, targets: &mut Targets) {
    let results = &cache.measurements;
    let find = |kind: Kind, op: Op, size: usize| {
        results
            .iter()
            .find(|m| m.kind == kind && m.op == op && m.size == size)
            .map(|m| m.summary)
    };
    println!("\n## Redis cache in front of Postgres (1 client)\n");
    println!(
        "| state | LoadLatest p50 postgres | with cache | ratio | p99 postgres | with cache | ratio | Save p50 postgres | with cache | Save overhead |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for size in CACHE_SIZES {
        let (Some(read), Some(read_cached), Some(save), Some(save_cached)) = (
            find(Kind::Postgres, Op::Read, size),
            find(Kind::Cached, Op::Read, size),
            find(Kind::Postgres, Op::Write, size),
            find(Kind::Cached, Op::Write, size),
        ) else {
            continue;
        };
        let read_ratio = ratio(ms(read_cached.p50), ms(read.p50));
        let overhead = ratio(ms(save_cached.p50), ms(save.p50)) - 1.0;
        println!(
            "| {} | {:.3} ms | {:.3} ms | {:.2}x | {:.3} ms | {:.3} ms | {:.2}x | {:.3} ms | {:.3} ms | {:+.1}% |",
            size_label(size),
            ms(read.p50),
            ms(read_cached.p50),
            read_ratio,
            ms(read.p99),
            ms(read_cached.p99),
            ratio(ms(read_cached.p99), ms(read.p99)),
            ms(save.p50),
            ms(save_cached.p50),
            overhead * 100.0,
        );
        targets.record(Row::CacheHit, size_label(size), read_ratio);
        verdicts.push(format!(
            "cache hit / postgres LoadLatest p50 at {}: {read_ratio:.2}x, target {} {}",
            size_label(size),
            Row::CacheHit.bound().label(),
            verdict(Row::CacheHit.bound().met_by(read_ratio))
        ));
        verdicts.push(format!(
            "Save with cache within +{:.0}% at {}: {:+.1}% {}",
            SAVE_OVERHEAD_BUDGET * 100.0,
            size_label(size),
            overhead * 100.0,
            verdict(overhead <= SAVE_OVERHEAD_BUDGET)
        ));
    }
    println!();
    if let Some(counts) = cache.counts {
        // The reads follow the writes, so every read should find the step it asks for cached.
        println!(
            "- cache lookups over the scenario (warm-ups included): {} hits, {} misses, {} stale, {} corrupt, {} bypassed; {} writes dropped, {} too large to cache",
            counts.hits,
            counts.misses,
            counts.stale,
            counts.corrupt,
            counts.bypassed,
            counts.writes_dropped,
            counts.skipped_large
        );
    }
    for verdict in verdicts {
        println!("- {verdict}");
    }
}
