//! `checkpointd bench`: Save and LoadLatest measured side by side with raw SQL.

use clap::Args;

/// Flags of `checkpointd bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Postgres URL to measure against.
    #[arg(
        long,
        env = "CHECKPOINTD_BENCH_DATABASE",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pub postgres: String,
}

pub async fn run(_args: BenchArgs) -> Result<(), Box<dyn std::error::Error>> {
    Err("bench is not built yet".into())
}
