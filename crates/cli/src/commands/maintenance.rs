//! `checkpointd prune` and `checkpointd scrub`: store maintenance run straight on the database
//! (`--database`, as `serve` takes it), so they work whether or not a server is up and need no
//! store-wide RPC that a tenant could call.

use clap::Args;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use checkpointd::config::RetentionArgs;
use checkpointd::database::{self, Opened};
use checkpointd::maintenance::{PlannedPrune, Pruner, ScrubItem, scrub};
use checkpointd::service::Engine;
use checkpointd_core::domain::{PageSize, Step, Tenant};
use checkpointd_core::secret::{ExposeSecret, SecretString, parse_secret};

/// `checkpointd prune`
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// The database to prune: sqlite://PATH or postgres://...
    #[arg(long, env = "CHECKPOINTD_DATABASE", hide_env_values = true, value_parser = parse_secret)]
    pub database: SecretString,
    /// Report what would be pruned; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub retention: RetentionArgs,
    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `checkpointd scrub`
#[derive(Debug, Args)]
pub struct ScrubArgs {
    /// The database to scrub: sqlite://PATH or postgres://...
    #[arg(long, env = "CHECKPOINTD_DATABASE", hide_env_values = true, value_parser = parse_secret)]
    pub database: SecretString,
    /// Only this tenant's checkpoints [default: every tenant].
    #[arg(long)]
    pub tenant: Option<String>,
    /// Checkpoint addresses read per page; memory holds one page at a time.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=PageSize::MAX.get() as i64))]
    pub page_size: u32,
    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

type Outcome = Result<(), Box<dyn std::error::Error>>;

async fn open(url: &str) -> Result<Opened, Box<dyn std::error::Error>> {
    Ok(database::open(url, &super::operator_store_options()?).await?)
}

/// Plans every run and, unless `--dry-run`, deletes what its policy lets go.
pub async fn prune(args: PruneArgs) -> Outcome {
    let settings = args.retention.settings()?;
    let opened = open(args.database.expose_secret()).await?;
    let pruner = Pruner::new(Engine::new(opened.store), opened.retention, settings);
    let json = args.json;
    let verb = if args.dry_run {
        "would prune"
    } else {
        "pruning"
    };
    let report = pruner
        .pass(args.dry_run, &CancellationToken::new(), |plan| {
            print_plan(plan, verb, json)
        })
        .await?;
    if json {
        println!(
            "{}",
            json!({
                "summary": true,
                "dry_run": args.dry_run,
                "runs_scanned": report.runs_scanned,
                "runs_pruned": report.runs_pruned,
                "checkpoints": report.checkpoints,
                "runs_fenced": report.runs_fenced,
            })
        );
    } else {
        let done = if args.dry_run {
            "would prune"
        } else {
            "pruned"
        };
        println!(
            "{done} {} checkpoints from {} of {} runs ({} skipped: resumed meanwhile)",
            report.checkpoints, report.runs_pruned, report.runs_scanned, report.runs_fenced
        );
    }
    Ok(())
}

fn print_plan(plan: &PlannedPrune, verb: &str, json: bool) {
    let steps: Vec<u64> = plan.steps.iter().map(|step| step.get()).collect();
    if json {
        println!(
            "{}",
            json!({
                "tenant": plan.run.tenant.as_str(),
                "run_id": plan.run.run_id.as_str(),
                "policy": plan.policy.to_string(),
                "latest_valid": plan.latest_valid.get(),
                "steps": steps,
            })
        );
    } else {
        println!(
            "{}: {verb} {} checkpoints (policy {}, latest valid step {}): steps {}",
            plan.run,
            steps.len(),
            plan.policy,
            plan.latest_valid,
            ranges(&plan.steps)
        );
    }
}

/// `1-4, 7, 9-10`: a long list of steps, short.
fn ranges(steps: &[Step]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut start = None;
    let mut previous: Option<u64> = None;
    let flush = |out: &mut Vec<String>, start: u64, end: u64| {
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    };
    for step in steps.iter().map(|step| step.get()) {
        match (start, previous) {
            (Some(_), Some(last)) if step == last + 1 => {}
            (Some(first), Some(last)) => {
                flush(&mut out, first, last);
                start = Some(step);
            }
            _ => start = Some(step),
        }
        previous = Some(step);
    }
    if let (Some(first), Some(last)) = (start, previous) {
        flush(&mut out, first, last);
    }
    out.join(", ")
}

/// Verifies every checkpoint in scope, printing the corrupt ones as they are found.
pub async fn scrub_store(args: ScrubArgs) -> Outcome {
    let opened = open(args.database.expose_secret()).await?;
    let engine = Engine::new(opened.store);
    let tenant = args.tenant.as_deref().map(Tenant::parse).transpose()?;
    let (sender, mut receiver) = mpsc::channel::<checkpointd_core::error::Result<ScrubItem>>(64);
    let json = args.json;
    let printer = tokio::spawn(async move {
        while let Some(Ok(item)) = receiver.recv().await {
            if item.verdict.valid {
                continue;
            }
            if json {
                println!(
                    "{}",
                    json!({
                        "tenant": item.run.tenant.as_str(),
                        "run_id": item.run.run_id.as_str(),
                        "step": item.verdict.step.get(),
                        "reason": item.verdict.reason,
                        "quarantined": item.verdict.quarantined,
                    })
                );
            } else {
                println!(
                    "corrupt: {} step {}: {}",
                    item.run, item.verdict.step, item.verdict.reason
                );
            }
        }
    });
    let page_size = PageSize::parse(args.page_size)?;
    let outcome = scrub(
        &engine,
        &*opened.retention,
        tenant.as_ref(),
        page_size,
        &sender,
        &CancellationToken::new(),
    )
    .await;
    drop(sender);
    let _ = printer.await;
    let stats = outcome?;
    let peak_rss_kib = peak_rss_kib();
    if json {
        println!(
            "{}",
            json!({
                "summary": true,
                "checked": stats.checked,
                "corrupt": stats.corrupt,
                "pages": stats.pages,
                "largest_page": stats.largest_page,
                "page_size": page_size.get(),
                "peak_rss_kib": peak_rss_kib,
            })
        );
    } else {
        println!(
            "checked {} checkpoints: {} corrupt (now quarantined), {} valid",
            stats.checked,
            stats.corrupt,
            stats.checked - stats.corrupt
        );
    }
    Ok(())
}

/// The process's peak resident memory (Linux `VmHWM`), to show that a scrub's memory does not
/// grow with the store; `None` where /proc is not available.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_fold_consecutive_steps() {
        let steps: Vec<Step> = [1, 2, 3, 5, 7, 8].into_iter().map(Step::new).collect();
        assert_eq!(ranges(&steps), "1-3, 5, 7-8");
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[Step::new(4)]), "4");
    }
}
