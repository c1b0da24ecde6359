//! `checkpointd worker`: the bundled runner as a process, driving the demo agent.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use checkpointd_telemetry::{LogFormat, TelemetryArgs, TelemetrySettings};

use crate::classify::{DEFAULT_FATAL_PATTERNS, ErrorClassifier};
use crate::client::Clients;
use crate::demo_agent::{DemoAgent, Faults};
use crate::dial::DialArgs;
use crate::effects::InDoubtPolicy;
use crate::events::{RunnerEvents, StdoutEvents};
use crate::parse_duration;
use crate::recovery::RecoveryPolicy;
use crate::stats::summary_line;
use crate::strategy::Strategy;
use crate::worker::{WorkerConfig, run_worker};

/// Flags of `checkpointd worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// checkpointd to work for.
    #[arg(
        long,
        env = "CHECKPOINTD_SERVER",
        default_value = "http://127.0.0.1:50051"
    )]
    pub server: String,
    /// Tenant to claim tasks of (sent as x-tenant-id).
    #[arg(long, env = "CHECKPOINTD_TENANT")]
    pub tenant: Option<String>,
    /// Name recorded on claimed tasks [default: worker-<pid>].
    #[arg(long, env = "CHECKPOINTD_WORKER_ID")]
    pub worker_id: Option<String>,
    /// Tasks run at once.
    #[arg(long, env = "CHECKPOINTD_WORKER_CONCURRENCY", default_value_t = 4)]
    pub concurrency: usize,
    /// Lease per claim; renewed every third of it. A crashed worker's tasks are reclaimed after it.
    #[arg(long, env = "CHECKPOINTD_WORKER_LEASE", default_value = "30s", value_parser = parse_duration)]
    pub lease: Duration,
    /// Pause between claims when the queue is empty.
    #[arg(long, default_value = "500ms", value_parser = parse_duration)]
    pub poll_interval: Duration,
    /// Checkpoint strategy: every_step, every_n:N, hybrid:N, plus ,after_tools and ,before_llm.
    #[arg(long, env = "CHECKPOINTD_STRATEGY", default_value = "every_n:3")]
    pub strategy: Strategy,
    /// In-process resurrections after transient errors before the task returns to the queue.
    #[arg(long, env = "CHECKPOINTD_MAX_RESURRECTIONS", default_value_t = 3)]
    pub max_resurrections: u32,
    /// Pause before each resurrection.
    #[arg(long, env = "CHECKPOINTD_RESURRECTION_COOLDOWN", default_value = "2s", value_parser = parse_duration)]
    pub cooldown: Duration,
    /// After SIGTERM, how long the current step may still run before it is abandoned.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub drain_deadline: Duration,
    /// Extra message fragment that marks an error fatal (repeatable), besides the defaults.
    #[arg(long = "fatal-pattern")]
    pub fatal_patterns: Vec<String>,
    /// Exit after this many tasks reached an end: completed, failed (retried later or dead),
    /// released or lost to another worker. A task parked for approval does not count.
    #[arg(long)]
    pub exit_after: Option<usize>,
    /// Log format: `text` or `json`.
    #[arg(long, env = "CHECKPOINTD_LOG_FORMAT", default_value = "text")]
    pub log_format: LogFormat,
    /// Demo agent: file its side-effecting tool appends one line per email to.
    #[arg(long)]
    pub side_effect_file: Option<PathBuf>,
    /// Demo agent: abort the process during this step (after its tools, before its checkpoint).
    #[arg(long)]
    pub crash_at_step: Option<u64>,
    /// Demo agent: abort the process right after this step's email is sent, before its result
    /// is journalled (the email's call is then in doubt).
    #[arg(long)]
    pub crash_after_side_effect_at_step: Option<u64>,
    /// Demo agent: the email tool's in-doubt policy: `retry_with_key` (the tool honours the
    /// idempotency key), `ask` (park the task for a human) or `fail`.
    #[arg(long = "in-doubt", default_value = "retry_with_key")]
    pub in_doubt: InDoubtPolicy,
    /// Demo agent: fail this step with an error that reads as fatal.
    #[arg(long)]
    pub fatal_at_step: Option<u64>,
    /// Demo agent: chance that a step fails with a transient error.
    #[arg(long, default_value_t = 0.0)]
    pub transient_probability: f64,
    /// Demo agent: ask for human approval before this step's email.
    #[arg(long)]
    pub approval_at_step: Option<u64>,
    /// Demo agent: seed of the transient-error draws.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Demo agent: simulated model latency per step.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub step_delay: Duration,
    /// Admin HTTP address serving `/metrics` and `/healthz`; unset: no admin port.
    #[arg(long, env = "CHECKPOINTD_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
    #[command(flatten)]
    pub dial: DialArgs,
}

pub async fn run(args: WorkerArgs) -> Result<(), Box<dyn std::error::Error>> {
    let telemetry = checkpointd_telemetry::init(&TelemetrySettings {
        log_format: args.log_format,
        otlp_endpoint: args.telemetry.otlp_endpoint.clone(),
        instance_id: args
            .telemetry
            .instance_id
            .clone()
            .unwrap_or_else(checkpointd_telemetry::default_instance_id),
        prometheus: args.admin_listen.is_some(),
    })?;
    checkpointd_telemetry::metrics::register();
    let admin_stop = CancellationToken::new();
    let admin = match (args.admin_listen, telemetry.prometheus_registry()) {
        (Some(addr), Some(registry)) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            println!("checkpointd admin listening on {}", listener.local_addr()?);
            Some(tokio::spawn(checkpointd_telemetry::admin::serve(
                listener,
                registry,
                None,
                admin_stop.clone().cancelled_owned(),
            )))
        }
        _ => None,
    };
    let dial = args.dial.dial(&args.server)?;
    let clients = Clients::dial(&dial, args.tenant.as_deref()).await?;
    let events: Arc<dyn RunnerEvents> = Arc::new(StdoutEvents);
    let agent = Arc::new(DemoAgent::new(
        Faults {
            crash_at_step: args.crash_at_step,
            fatal_at_step: args.fatal_at_step,
            transient_probability: args.transient_probability,
            approval_at_step: args.approval_at_step,
            seed: args.seed,
            step_delay: args.step_delay,
            crash_after_side_effect_at_step: args.crash_after_side_effect_at_step,
            in_doubt: args.in_doubt,
        },
        args.side_effect_file,
        events.clone(),
    ));
    let patterns = DEFAULT_FATAL_PATTERNS
        .iter()
        .map(|p| p.to_string())
        .chain(args.fatal_patterns);
    let config = WorkerConfig {
        worker_id: args
            .worker_id
            .unwrap_or_else(|| format!("worker-{}", std::process::id())),
        tenant: args.tenant,
        concurrency: args.concurrency.max(1),
        lease: args.lease,
        poll_interval: args.poll_interval,
        exit_after: args.exit_after,
        recovery: RecoveryPolicy {
            strategy: args.strategy,
            max_resurrections: args.max_resurrections,
            cooldown: args.cooldown,
            classifier: ErrorClassifier::new(patterns),
            drain_deadline: args.drain_deadline,
        },
    };
    let shutdown = CancellationToken::new();
    let trigger = shutdown.clone();
    tokio::spawn(async move {
        crate::shutdown::signal().await;
        tracing::info!("shutdown requested; finishing current steps");
        trigger.cancel();
    });
    tracing::info!(worker_id = %config.worker_id, server = %args.server, strategy = %config.recovery.strategy, "worker started");
    let report = run_worker(agent, Arc::new(clients), events, config, shutdown).await;
    admin_stop.cancel();
    if let Some(admin) = admin {
        let _ = admin.await;
    }
    telemetry.shutdown().await;
    println!("{}", summary_line(&report?.stats));
    Ok(())
}
