//! Operator commands: gRPC clients of a running checkpointd for manual inspection and recovery.
//!
//! `checkpointd tasks ...` talks to `checkpoint.v1.TaskService`, `checkpointd runs ...` to
//! `checkpoint.v1.CheckpointService`, `checkpointd webhooks ...` to
//! `checkpoint.v1.NotificationService`. Every command takes `--server`, `--tenant`, `--json`, the TLS flags and `--token`;
//! failures come back as `CODE: message` and a non-zero exit. `checkpointd health` asks the
//! standard gRPC health service, for container health checks.

mod client;
mod database;
mod health;
mod journal;
mod keys;
mod listing;
mod maintenance;
mod output;
mod payload;
mod quarantine;
mod run_heads;
mod runs;
mod task_view;
mod tasks;
mod webhooks;

use clap::{Args, Subcommand, ValueEnum};

use checkpointd_storage::store::StoreOptions;

use checkpointd::proto;

pub use database::{DbArgs, db};
pub use health::{HealthArgs, health};
pub use keys::{KeysArgs, keys};
pub use maintenance::{PruneArgs, ScrubArgs, prune, scrub_store};
pub use output::end_quietly_on_broken_pipe;

/// Where to send requests and how to print the answers; shared by every operator command.
#[derive(Debug, Clone, Args)]
pub struct Connection {
    /// URL of the checkpointd server.
    #[arg(
        long,
        global = true,
        env = "CHECKPOINTD_SERVER",
        default_value = "http://127.0.0.1:50051"
    )]
    pub server: String,
    /// Tenant to act for, sent as the `x-tenant-id` header [default: the server's default tenant].
    #[arg(long, global = true, env = "CHECKPOINTD_TENANT")]
    pub tenant: Option<String>,
    /// Print machine-readable JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
    /// TLS (`--ca-cert`, `--client-cert`, `--client-key`) and the `--token` credential.
    #[command(flatten)]
    pub dial: checkpointd_client::DialArgs,
}

/// `checkpointd tasks ...`
#[derive(Debug, Args)]
pub struct TasksArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: TasksCommand,
}

#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// List tasks, oldest first, following pages up to --limit.
    List {
        /// Only tasks in this state.
        #[arg(long)]
        state: Option<StateFilter>,
        /// Most tasks to print.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        limit: u32,
    },
    /// Show one task in full, with its approval request and decision.
    Show {
        /// The task id.
        id: String,
    },
    /// Approve a task waiting in input_required; it becomes claimable again, or stays parked
    /// for `tasks resume` when its auto_resume_hitl is off.
    Approve(Decision),
    /// Reject a task waiting in input_required; the agent sees the rejection once the task
    /// runs again (at once, or after `tasks resume` when its auto_resume_hitl is off).
    Reject(Decision),
    /// Let a task that an approval or rejection left parked in input_required run again.
    Resume {
        /// The task id.
        id: String,
    },
    /// List dead letters (shortcut for `list --state dead`).
    Dead {
        /// Most tasks to print.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        limit: u32,
    },
    /// Bring a dead or failed task back to pending with fresh attempts.
    Requeue {
        /// The task id.
        id: String,
    },
    /// Cancel a task that has not finished.
    Cancel {
        /// The task id.
        id: String,
    },
    /// Add a task for a run.
    Enqueue {
        /// The run the task drives.
        #[arg(long)]
        run: String,
        /// Input for the agent, as text.
        #[arg(long, default_value = "")]
        input: String,
        /// Deduplicates enqueues: a second enqueue with the same key returns the first task.
        #[arg(long)]
        idempotency_key: Option<String>,
        /// Total runs the task may have, the first included [default: the server's].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        max_attempts: Option<u32>,
        /// `false` parks the task after an approval decision until `tasks resume`
        /// [default: the server's --auto-resume-hitl].
        #[arg(long)]
        auto_resume_hitl: Option<bool>,
    },
}

/// The arguments of `approve` and `reject`.
#[derive(Debug, Args)]
pub struct Decision {
    /// The task id.
    pub id: String,
    /// Who decides; recorded on the task.
    #[arg(long)]
    pub by: String,
    /// Optional comment for the agent and the audit trail.
    #[arg(long, default_value = "")]
    pub comment: String,
}

/// A task state as typed on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StateFilter {
    Pending,
    Running,
    Completed,
    Failed,
    #[value(name = "input_required", alias = "input-required")]
    InputRequired,
    Dead,
    Cancelled,
}

impl StateFilter {
    fn to_wire(self) -> proto::TaskState {
        match self {
            Self::Pending => proto::TaskState::Pending,
            Self::Running => proto::TaskState::Running,
            Self::Completed => proto::TaskState::Completed,
            Self::Failed => proto::TaskState::Failed,
            Self::InputRequired => proto::TaskState::InputRequired,
            Self::Dead => proto::TaskState::Dead,
            Self::Cancelled => proto::TaskState::Cancelled,
        }
    }
}

/// `checkpointd runs ...`
#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: RunsCommand,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List the tenant's runs by id: epoch, latest and latest valid step, checkpoints, message
    /// log and tool journal lengths, last change.
    List {
        /// Only runs whose id starts with this text.
        #[arg(long, default_value = "")]
        prefix: String,
    },
    /// Show one run's head (what `list` shows for it), without loading any payload.
    Head {
        /// The run id.
        run: String,
    },
    /// List a run's checkpoints: step, size, status, time, epoch, checksum and pins.
    ///
    /// Rows are `unverified` until `--verify` recomputes their checksums.
    Show {
        /// The run id.
        run: String,
        /// Verify every checksum first (Validate), quarantining corrupt checkpoints.
        #[arg(long)]
        verify: bool,
        /// Only this step.
        #[arg(long)]
        step: Option<i64>,
        /// Print the step's content: state (pretty JSON when it is JSON), messages and the
        /// run's tool journal.
        #[arg(long, requires = "step", conflicts_with = "verify")]
        payload: bool,
    },
    /// Recover a run as an agent would (bumps the epoch and fences the current worker).
    ///
    /// WARNING: this bumps the run's fencing epoch. A worker currently running the run is fenced
    /// out: its next save or tool result fails with FAILED_PRECONDITION. Use it on stuck runs.
    Resume {
        /// The run id.
        run: String,
        /// After the resume, enqueue a task for the run so that a worker drives it on; prints
        /// the task id.
        #[arg(long)]
        enqueue: bool,
        /// Input of the enqueued task, as text (the demo agent reads `{"steps":N}`).
        #[arg(long, requires = "enqueue", default_value = "")]
        input: String,
    },
    /// Pin a checkpoint so that no retention policy prunes it.
    Pin {
        /// The run id.
        run: String,
        /// The step to pin.
        step: i64,
    },
    /// Remove an operator's pin (approval pins go when the task is decided).
    Unpin {
        /// The run id.
        run: String,
        /// The step to unpin.
        step: i64,
        /// Remove every pin on the step, an approval wait's included.
        #[arg(long)]
        all_sources: bool,
    },
    /// Delete a run's quarantined checkpoints, the repair after corruption: until they go (or
    /// a newer valid checkpoint is saved above them) every load and Resume reports them.
    DropQuarantined {
        /// The run id.
        run: String,
    },
    /// Show a run's tool journal (results, intents, calls in doubt, corrupt entries, repairs),
    /// or repair one call: `--mark-done CALL --output TEXT` or `--drop CALL`.
    Journal(journal::JournalArgs),
    /// Set a run's retention policy: all, latest_only, keep_last:N, max_age:DURATION, or
    /// `default` for the server's.
    Retention {
        /// The run id.
        run: String,
        /// The policy.
        policy: String,
    },
}

/// Runs a `checkpointd tasks` command against the server.
pub async fn tasks(args: TasksArgs) -> Result<(), Box<dyn std::error::Error>> {
    let client = client::Client::connect(&args.connection).await?;
    tasks::run(&client, args.command, args.connection.json).await?;
    Ok(())
}

/// Runs a `checkpointd runs` command against the server.
pub async fn runs(args: RunsArgs) -> Result<(), Box<dyn std::error::Error>> {
    let client = client::Client::connect(&args.connection).await?;
    runs::run(&client, args.command, args.connection.json).await?;
    Ok(())
}

/// `checkpointd webhooks ...`
#[derive(Debug, Args)]
pub struct WebhooksArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: WebhooksCommand,
}

/// An admin's webhook endpoints (of the credential's tenant) and their deliveries.
#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Add an endpoint and print its signing secret, once.
    Create {
        /// The http:// or https:// URL events are POSTed to.
        url: String,
        /// A note to recognise the endpoint by.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// List the endpoints; never a secret.
    List,
    /// Remove an endpoint and its deliveries.
    Delete {
        /// The endpoint's id, as `webhooks list` shows it.
        id: String,
    },
    /// List deliveries, newest first, with their status.
    Deliveries {
        /// Only deliveries to this endpoint.
        #[arg(long)]
        endpoint: Option<String>,
        /// Only deliveries in this status.
        #[arg(long, value_enum)]
        status: Option<DeliveryStatusFilter>,
        /// Most deliveries shown (at most 1000).
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
}

/// A delivery status, as `webhooks deliveries --status` takes it.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DeliveryStatusFilter {
    Pending,
    Failing,
    Delivered,
    #[value(name = "given_up")]
    GivenUp,
}

impl DeliveryStatusFilter {
    fn wire(self) -> proto::DeliveryStatus {
        match self {
            Self::Pending => proto::DeliveryStatus::Pending,
            Self::Failing => proto::DeliveryStatus::Failing,
            Self::Delivered => proto::DeliveryStatus::Delivered,
            Self::GivenUp => proto::DeliveryStatus::GivenUp,
        }
    }
}

/// Runs a `checkpointd webhooks` command against the server.
pub async fn webhooks(args: WebhooksArgs) -> Result<(), Box<dyn std::error::Error>> {
    let client = client::Client::connect(&args.connection).await?;
    webhooks::run(&client, args.command, args.connection.json).await?;
    Ok(())
}

/// The store options of a command that opens the database itself (`keys`, `scrub`, `prune`):
/// a small pool, and the server's `CHECKPOINTD_POSTGRES_STATEMENTS` when the environment has it
/// (as a pod of the server's Deployment does), so the command works behind the same pooler.
fn operator_store_options() -> Result<StoreOptions, String> {
    let statements = match std::env::var("CHECKPOINTD_POSTGRES_STATEMENTS") {
        Ok(raw) => raw.parse()?,
        Err(_) => Default::default(),
    };
    Ok(StoreOptions {
        pool_size: 2,
        statements,
        listen_url: None,
    })
}
