//! The `checkpointd` binary: parse the command line, load configuration, run.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use checkpointd::app::App;
use checkpointd::config::{ServeArgs, ServeConfig};
use checkpointd::serve_error::ServeError;
use checkpointd::telemetry;
use checkpointd_core::secret::redact_url;

mod commands;
mod demo;

/// The `checkpointd` command line.
#[derive(Debug, Parser)]
#[command(
    name = "checkpointd",
    version,
    about = "Crash recovery for long-running AI agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gRPC server.
    Serve(Box<ServeArgs>),
    /// Run the bundled runner: claim tasks and drive the demo agent through crashes.
    Worker(Box<checkpointd_runner::worker_command::WorkerArgs>),
    /// Run the reference scenario end to end: a worker crashes at step 5, another resumes at 3.
    Demo(demo::DemoArgs),
    /// Inspect and steer queued tasks: list, approve, reject, requeue, cancel.
    Tasks(commands::TasksArgs),
    /// Inspect and recover runs: show checkpoints with validity, resume.
    Runs(commands::RunsArgs),
    /// Ask a server's gRPC health service once; exit 0 only when it is SERVING.
    Health(commands::HealthArgs),
    /// Apply retention policies once, straight on the database; `--dry-run` only reports.
    Prune(commands::PruneArgs),
    /// Verify every checkpoint (of one tenant or all), quarantining the corrupt ones.
    Scrub(commands::ScrubArgs),
    /// Create, list and revoke API keys, straight on the database.
    Keys(commands::KeysArgs),
    /// Webhook endpoints and their deliveries (an admin's): create, list, delete, deliveries.
    Webhooks(commands::WebhooksArgs),
    /// Database administration: `db distribute` distributes the schema by tenant on Citus.
    Db(commands::DbArgs),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve(_) | Command::Worker(_)) {
        commands::end_quietly_on_broken_pipe();
    }
    let outcome = match cli.command {
        Command::Serve(args) => serve(*args).await.map_err(Into::into),
        Command::Worker(args) => checkpointd_runner::worker_command::run(*args).await,
        Command::Demo(args) => demo::run(args).await,
        Command::Tasks(args) => commands::tasks(args).await,
        Command::Runs(args) => commands::runs(args).await,
        Command::Health(args) => commands::health(args).await,
        Command::Prune(args) => commands::prune(args).await,
        Command::Scrub(args) => commands::scrub_store(args).await,
        Command::Keys(args) => commands::keys(args).await,
        Command::Webhooks(args) => commands::webhooks(args).await,
        Command::Db(args) => commands::db(args).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("checkpointd: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `checkpointd serve`: telemetry for the process, then the app until SIGINT or SIGTERM.
async fn serve(args: ServeArgs) -> Result<(), ServeError> {
    let config = ServeConfig::resolve(args)?;
    checkpointd::heap::configure();
    let telemetry = telemetry::init(&config.telemetry)?;
    telemetry::metrics::register();
    let database = redact_url(checkpointd_core::secret::ExposeSecret::expose_secret(
        &config.database,
    ));
    let tls = config.tls.is_some();
    let app = App::build(config)
        .await?
        .with_metrics_registry(telemetry.prometheus_registry().unwrap_or_default());
    // Plain lines on stdout tell scripts and tests the bound addresses (useful with port 0),
    // the admin port's first.
    println!("checkpointd admin listening on {}", app.admin_addr()?);
    println!("checkpointd listening on {}", app.addr()?);
    if let Some(console) = app.console_addr() {
        println!("checkpointd console listening on {}", console?);
    }
    tracing::info!(listen = %app.addr()?, %database, tls, "checkpointd serving");
    let served = app.run(checkpointd_runner::shutdown::signal()).await;
    telemetry.shutdown().await;
    served?;
    tracing::info!("checkpointd stopped");
    Ok(())
}
