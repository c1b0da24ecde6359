//! The `checkpointd-bench` binary: parse the flags, run the chosen scenarios, print the tables.

use std::process::ExitCode;

use checkpointd_bench::BenchArgs;
use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    match checkpointd_bench::run(BenchArgs::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("checkpointd-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
