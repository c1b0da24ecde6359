//! The `checkpointd` binary: parse the command line, load configuration, run.

use std::process::ExitCode;

use clap::Parser;
use tokio::net::TcpListener;

use checkpointd::config::{Cli, Command, ServeConfig};
use checkpointd::engine::Engine;
use checkpointd::{grpc, store, telemetry};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Bench(args) => checkpointd::bench::run(args).await,
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
    telemetry::init(config.log_format);
    let store = store::open(&config.database, &config.store).await?;
    let listener = TcpListener::bind(config.listen).await?;
    // A plain line on stdout tells scripts and tests the bound address (useful with port 0).
    println!("checkpointd listening on {}", listener.local_addr()?);
    tracing::info!(
        listen = %listener.local_addr()?,
        database = %store::redact_url(&config.database),
        "checkpointd serving"
    );
    grpc::run(
        listener,
        Engine::new(store),
        config.server,
        shutdown_signal(),
    )
    .await
    .map_err(|error| error.to_string())?;
    tracing::info!("checkpointd stopped");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("installing a SIGTERM handler cannot fail on unix");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
