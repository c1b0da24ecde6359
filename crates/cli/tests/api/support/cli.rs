//! Runs the real `checkpointd` binary as an operator would, against a test server.

use std::net::SocketAddr;
use std::process::{Command, Output};

/// Runs `checkpointd ARGS --server http://ADDR` with no CHECKPOINTD_* settings inherited.
pub fn cli(addr: SocketAddr, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args(args)
        .args(["--server", &format!("http://{addr}")])
        .env_remove("CHECKPOINTD_SERVER")
        .env_remove("CHECKPOINTD_TENANT")
        .output()
        .expect("run checkpointd")
}

/// The command's standard output; panics with its stderr when it failed.
pub fn stdout_of(output: &Output) -> String {
    assert!(
        output.status.success(),
        "checkpointd failed: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}
