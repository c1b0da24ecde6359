//! The `checkpointd` binary the process scenarios run (`serve` for a server with its own
//! process-wide telemetry, `worker` for crashes), and a `checkpointd serve` child process.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::BoxError;

/// A `checkpointd` executable that exists; the bench runs it, never builds it.
#[derive(Clone, Debug)]
pub struct CheckpointdBinary(PathBuf);

impl CheckpointdBinary {
    /// `explicit` (`--checkpointd-bin`), or else `checkpointd` next to this executable: cargo
    /// puts every binary of the workspace in the same target directory, so after
    /// `cargo build --release -p checkpointd` it is beside `checkpointd-bench`.
    pub fn locate(explicit: Option<&Path>) -> Result<Self, BoxError> {
        let path = match explicit {
            Some(path) => path.to_owned(),
            None => sibling_of_current_exe()?,
        };
        if path.is_file() {
            Ok(Self(path))
        } else {
            Err(format!(
                "no checkpointd binary at {} (the recovery and tracing scenarios run it): \
                 build it with `cargo build --release -p checkpointd`, or pass --checkpointd-bin",
                path.display()
            )
            .into())
        }
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

fn sibling_of_current_exe() -> Result<PathBuf, BoxError> {
    let exe = std::env::current_exe()?;
    let dir = exe.parent().ok_or("this executable has no directory")?;
    // Test executables live one level down, in `deps/`; the binaries sit in its parent.
    let dir = if dir.ends_with("deps") {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    Ok(dir.join(format!("checkpointd{}", std::env::consts::EXE_SUFFIX)))
}

/// Killed when dropped.
pub struct ServerProcess {
    pub addr: SocketAddr,
    child: Child,
}

impl ServerProcess {
    /// Serves `database` on ephemeral ports with `extra` flags and environment.
    pub async fn start(
        binary: &CheckpointdBinary,
        database: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Self, BoxError> {
        let mut child = Command::new(binary.path())
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
