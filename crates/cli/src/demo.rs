//! `checkpointd demo`: the reference scenario end to end, with a real crash.
//!
//! A 10-step task checkpoints every 3 steps; the first worker process aborts during step 5; a
//! second worker reclaims the task after its lease expires, resumes from step 3 and finishes.
//! The demo then prints the time from crash to resumption, tool executions against distinct
//! tool calls, and save latencies: the second worker's few saves, and a measurement over many
//! saves of a checkpoint the size of the demo's last one, so the percentiles mean something.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;

use checkpointd_runner::client::Clients;
use checkpointd_runner::stats::quantile;

use checkpointd::app::App;
use checkpointd::config::{ServeConfig, parse_duration};
use checkpointd::proto::{
    EnqueueRequest, GetRequest, LoadLatestRequest, Message, SaveRequest, TaskState,
};

/// Flags of `checkpointd demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// A running checkpointd to use; by default the demo starts one in-process on a temporary
    /// SQLite file.
    #[arg(long)]
    pub server: Option<String>,
    /// Steps of the task.
    #[arg(long, default_value_t = 10)]
    pub steps: u64,
    /// Checkpoint every N steps.
    #[arg(long, default_value_t = 3)]
    pub every: u64,
    /// The step during which the first worker crashes.
    #[arg(long, default_value_t = 5)]
    pub crash_at_step: u64,
    /// Worker lease: how long until a crashed worker's task is reclaimed.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub lease: Duration,
    /// Saves timed for the latency line, on a run of their own; 0 skips the measurement.
    #[arg(long, default_value_t = 200)]
    pub latency_saves: usize,
}

/// Below this many samples a p95 or p99 is just one of the few slowest saves.
const FEW_SAVES: u64 = 20;

fn unix_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// Runs `checkpointd worker` with `extra` flags, echoing its stdout events; returns them.
fn run_worker(
    server: &str,
    spool: &Path,
    args: &DemoArgs,
    extra: &[String],
) -> Result<Vec<String>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("worker")
        .args([
            "--server",
            server,
            "--exit-after",
            "1",
            "--concurrency",
            "1",
        ])
        .args(["--strategy", &format!("every_n:{}", args.every)])
        .args(["--lease", &format!("{}ms", args.lease.as_millis())])
        .args(["--poll-interval", "100ms", "--cooldown", "200ms"])
        .arg("--side-effect-file")
        .arg(spool)
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start a worker: {e}"))?;
    let mut lines = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            println!("  | {line}");
            lines.push(line);
        }
    }
    child.wait().map_err(|e| e.to_string())?;
    Ok(lines)
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
}

pub async fn run(args: DemoArgs) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile_dir()?;
    let (server, _stop) = match &args.server {
        Some(server) => (server.clone(), None),
        None => {
            let (url, stop) = start_server(&dir.join("demo.db")).await?;
            (url, Some(stop))
        }
    };
    println!("checkpointd demo against {server}");
    let clients = Clients::connect(&server, None).await?;
    let run_id = format!("demo-{}", unix_millis());
    let task = clients
        .tasks
        .clone()
        .enqueue(EnqueueRequest {
            run_id: run_id.clone(),
            input: format!("{{\"steps\":{}}}", args.steps).into_bytes(),
            ..EnqueueRequest::default()
        })
        .await?
        .into_inner()
        .task
        .ok_or("enqueue returned no task")?;
    let spool = dir.join("emails.log");

    println!(
        "worker 1: runs until it crashes during step {}",
        args.crash_at_step
    );
    run_worker(
        &server,
        &spool,
        &args,
        &["--crash-at-step".into(), args.crash_at_step.to_string()],
    )?;
    let crashed_at = unix_millis();

    println!("worker 2: reclaims the task once the lease expires, resumes and finishes");
    let lines = run_worker(&server, &spool, &args, &[])?;
    let resumed = lines
        .iter()
        .find(|line| line.starts_with("event resumed"))
        .ok_or("worker 2 never resumed the run")?;
    let recovered: i64 = field(resumed, "recovered_from_step")
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);
    let resumed_at: u128 = field(resumed, "at_ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let summary = lines
        .iter()
        .find(|line| line.starts_with("summary"))
        .cloned()
        .unwrap_or_default();

    let final_task = clients
        .tasks
        .clone()
        .get(GetRequest {
            task_id: task.task_id.clone(),
        })
        .await?
        .into_inner()
        .task
        .ok_or("task vanished")?;
    let spooled = std::fs::read_to_string(&spool).unwrap_or_default();
    let executions = spooled.lines().count();
    let distinct = spooled.lines().collect::<HashSet<_>>().len();

    println!();
    println!("run                      {run_id}");
    println!(
        "task state               {:?}",
        TaskState::try_from(final_task.state).unwrap_or(TaskState::Unspecified)
    );
    println!("recovered_from_step      {recovered}");
    println!(
        "crash to resumption      {} ms (lease {} ms; the rest is claim + Resume)",
        resumed_at.saturating_sub(crashed_at),
        args.lease.as_millis()
    );
    let number = |key: &str| -> u64 {
        field(&summary, key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let millis = |key: &str| format!("{:.2} ms", number(key) as f64 / 1000.0);
    // A worker that resumes at step 3 of 10 saves only a handful of times: its percentiles are
    // printed with their sample size, and the measurement below gives ones worth reading.
    let saves = number("saves");
    let caveat = if saves < FEW_SAVES {
        ": too few for percentiles"
    } else {
        ""
    };
    println!(
        "latency of worker 2      p50 {}  p95 {}  p99 {}  (n={saves} saves{caveat})",
        millis("p50_us"),
        millis("p95_us"),
        millis("p99_us"),
    );
    if args.latency_saves > 0 {
        let state = last_state(&clients, &run_id).await?;
        let bytes = state.len();
        let mut latencies = time_saves(
            &clients,
            &format!("{run_id}-latency"),
            state,
            args.latency_saves,
        )
        .await?;
        latencies.sort();
        let ms = |q: f64| format!("{:.2} ms", quantile(&latencies, q).as_secs_f64() * 1000.0);
        println!(
            "per-save latency         p50 {}  p95 {}  p99 {}  (n={} saves of {bytes} bytes + 1 message each)",
            ms(0.50),
            ms(0.95),
            ms(0.99),
            latencies.len()
        );
    }
    println!(
        "bytes per save           mean {}  max {}  total {}",
        number("mean_bytes"),
        number("max_bytes"),
        number("total_bytes")
    );
    println!(
        "tool calls               {} executed, {} replayed from the journal",
        number("tools_executed"),
        number("tools_replayed")
    );
    println!("email tool executions    {executions}");
    println!("distinct email calls     {distinct}");
    if final_task.state != TaskState::Completed as i32 {
        return Err("the task did not complete".into());
    }
    if executions != distinct {
        return Err(format!(
            "{executions} executions for {distinct} distinct calls: a tool ran twice"
        )
        .into());
    }
    println!("ok: every tool call ran exactly once");
    Ok(())
}

/// The state of the run's latest checkpoint: the size the latency measurement saves.
async fn last_state(
    clients: &Clients,
    run_id: &str,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let request = LoadLatestRequest {
        run_id: run_id.to_owned(),
        ..Default::default()
    };
    let latest = checkpointd_runner::pages::load_latest(&clients.checkpoints, request).await?;
    Ok(latest.checkpoint.map(|c| c.state).unwrap_or_default())
}

/// Times `count` consecutive Saves on `run_id`, each at the next step with one new message, as
/// an agent checkpointing every step would; each latency is one Save's round trip.
async fn time_saves(
    clients: &Clients,
    run_id: &str,
    state: Vec<u8>,
    count: usize,
) -> Result<Vec<Duration>, Box<dyn std::error::Error>> {
    let mut checkpoints = clients.checkpoints.clone();
    let mut latencies = Vec::with_capacity(count);
    for step in 1..=count {
        let request = SaveRequest {
            run_id: run_id.to_owned(),
            step: step as i64,
            content_type: "application/json".to_owned(),
            state: state.clone(),
            messages: vec![Message {
                role: "assistant".to_owned(),
                content: format!("step {step} done").into_bytes(),
            }],
            message_offset: (step - 1) as u64,
            ..SaveRequest::default()
        };
        let started = Instant::now();
        checkpoints.save(request).await?;
        latencies.push(started.elapsed());
    }
    Ok(latencies)
}

fn tempfile_dir() -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("checkpointd-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Serves checkpoints and tasks on a SQLite file, in this process, on an ephemeral port,
/// until the returned guard is dropped.
async fn start_server(
    path: &Path,
) -> Result<(String, tokio_util::sync::DropGuard), Box<dyn std::error::Error>> {
    let app = App::build(ServeConfig {
        database: format!("sqlite://{}", path.display()).into(),
        ..ServeConfig::default()
    })
    .await
    .map_err(|error| error.to_string())?;
    let url = format!("http://{}", app.addr()?);
    let stop = app.shutdown().begin_on_drop();
    tokio::spawn(app.run(std::future::pending()));
    Ok((url, stop))
}
