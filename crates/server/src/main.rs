//! The `checkpointd` binary: parse the command line, load configuration, run.

use std::process::ExitCode;

use clap::Parser;
use tokio::net::TcpListener;

use checkpointd::cache::CachedStore;
use checkpointd::config::{Cli, Command, ServeConfig};
use checkpointd::engine::Engine;
use checkpointd::{grpc, store, telemetry};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Worker(args) => checkpointd::runner::worker_command::run(args).await,
        Command::Demo(args) => checkpointd::runner::demo::run(args).await,
        Command::Tasks(args) => checkpointd::cli::tasks(args).await,
        Command::Runs(args) => checkpointd::cli::runs(args).await,
        Command::Health(args) => checkpointd::cli::health(args).await,
        Command::Prune(args) => checkpointd::cli::prune(args).await,
        Command::Scrub(args) => checkpointd::cli::scrub_store(args).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("checkpointd: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: checkpointd::config::ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let config = ServeConfig::resolve(args)?;
    let telemetry = telemetry::init(&config.telemetry)?;
    telemetry::metrics::register();
    let opened = store::open_with_queue(&config.database, &config.store).await?;
    let admin_listener = TcpListener::bind(config.admin_listen).await?;
    println!(
        "checkpointd admin listening on {}",
        admin_listener.local_addr()?
    );
    let listener = TcpListener::bind(config.listen).await?;
    // A plain line on stdout tells scripts and tests the bound address (useful with port 0).
    println!("checkpointd listening on {}", listener.local_addr()?);
    tracing::info!(
        listen = %listener.local_addr()?,
        database = %store::redact_url(&config.database),
        "checkpointd serving"
    );
    let stop = tokio_util::sync::CancellationToken::new();
    let admin = tokio::spawn(telemetry::admin::serve(
        admin_listener,
        telemetry.prometheus_registry().unwrap_or_default(),
        Some(opened.store.clone()),
        stop.clone().cancelled_owned(),
    ));
    let queue_depth = tokio::spawn(telemetry::queue_depth::poll(
        opened.queue.clone(),
        stop.clone(),
    ));
    let mut backends = grpc::Backends::from(opened);
    if let Some(settings) = config.cache.clone() {
        tracing::info!(redis = %store::redact_url(&settings.url), prefix = %settings.prefix, "redis cache enabled");
        let cached = CachedStore::wrap(backends.engine.store().clone(), settings)?;
        backends.cache_status = Some(cached.status());
        backends.engine = Engine::new(cached);
    }
    let served = grpc::run(
        listener,
        backends,
        config.server,
        checkpointd::shutdown::signal(),
    )
    .await;
    stop.cancel();
    let _ = admin.await;
    let _ = queue_depth.await;
    telemetry.shutdown().await;
    served.map_err(|error| error.to_string())?;
    tracing::info!("checkpointd stopped");
    Ok(())
}
