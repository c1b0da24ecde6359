//! A `checkpointd serve` child process (this executable), for scenarios that need a server
//! with its own process-wide telemetry.

use std::net::SocketAddr;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::BoxError;

/// Killed when dropped.
pub struct ServerProcess {
    pub addr: SocketAddr,
    child: Child,
}

impl ServerProcess {
    /// Serves `database` on ephemeral ports with `extra` flags and environment.
    pub async fn start(
        database: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Self, BoxError> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(["--admin-listen", "127.0.0.1:0", "--database", database])
            .args(extra)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or("no stdout from checkpointd serve")?;
        let mut lines = BufReader::new(stdout).lines();
        while let Some(line) = lines.next_line().await? {
            if let Some(addr) = line.strip_prefix("checkpointd listening on ") {
                return Ok(Self {
                    addr: addr.trim().parse()?,
                    child,
                });
            }
        }
        Err("checkpointd serve exited before listening".into())
    }

    /// SIGTERM, so the server drains and flushes its telemetry, then waits for the exit.
    pub async fn stop(mut self) -> Result<(), BoxError> {
        if let Some(pid) = self.child.id() {
            Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await?;
        }
        self.child.wait().await?;
        Ok(())
    }
}
