//! The real `checkpointd` binary as a child process, for crash and shutdown tests.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};

/// `checkpointd serve` on `database_url`, both ports on free loopback ports, logging warnings,
/// with its output piped: what every process test starts from.
pub fn serve_command(database_url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_checkpointd"));
    command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--admin-listen", "127.0.0.1:0", "--database", database_url])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A `checkpointd serve` process on ephemeral ports (gRPC and admin).
pub struct ServerProcess {
    child: Child,
    pub addr: SocketAddr,
    /// The admin HTTP port (`/metrics`, `/healthz`).
    pub admin_addr: SocketAddr,
    /// Its log (stderr) lines so far, when started by [`ServerProcess::start_capturing_log`].
    log: Option<std::sync::Arc<std::sync::Mutex<Vec<String>>>>,
}

impl ServerProcess {
    pub fn start(database_url: &str, extra_args: &[&str]) -> Self {
        Self::start_with_env(database_url, extra_args, &[])
    }

    /// Starts with extra environment variables, e.g. telemetry export intervals.
    pub fn start_with_env(database_url: &str, extra_args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn(database_url, extra_args, env, false)
    }

    /// Starts with its log (warnings and errors) collected for [`ServerProcess::log_lines`]
    /// instead of passed through.
    pub fn start_capturing_log(database_url: &str, extra_args: &[&str]) -> Self {
        Self::spawn(database_url, extra_args, &[], true)
    }

    /// The log lines so far (empty unless started by [`ServerProcess::start_capturing_log`]).
    pub fn log_lines(&self) -> Vec<String> {
        self.log
            .as_ref()
            .map(|log| log.lock().unwrap().clone())
            .unwrap_or_default()
    }

    fn spawn(
        database_url: &str,
        extra_args: &[&str],
        env: &[(&str, &str)],
        capture_log: bool,
    ) -> Self {
        let mut child = serve_command(database_url)
            .args(extra_args)
            .envs(env.iter().copied())
            .stderr(if capture_log {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .expect("spawn checkpointd");
        let log = child.stderr.take().map(|stderr| {
            let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let sink = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    // Still shown, as an inherited stderr would be, for a failing test's output.
                    eprintln!("{line}");
                    sink.lock().unwrap().push(line);
                }
            });
            lines
        });
        let stdout = child.stdout.take().unwrap();
        let mut stdout = BufReader::new(stdout);
        // The admin address comes first, then the gRPC one.
        let mut address_after = |prefix: &str| -> SocketAddr {
            let mut line = String::new();
            stdout
                .read_line(&mut line)
                .expect("read checkpointd stdout");
            line.trim()
                .strip_prefix(prefix)
                .unwrap_or_else(|| panic!("checkpointd did not start; it printed {line:?}"))
                .parse()
                .expect("parse a bound address")
        };
        let admin_addr = address_after("checkpointd admin listening on ");
        let addr = address_after("checkpointd listening on ");
        Self {
            child,
            addr,
            admin_addr,
            log,
        }
    }

    /// The process id, e.g. to change its resource limits or read its CPU time.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no shutdown code runs at all.
    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL checkpointd");
        self.child.wait().expect("reap checkpointd");
    }

    /// SIGTERM, then wait for the exit.
    pub fn terminate(&mut self) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
        self.child.wait().expect("wait for checkpointd")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `checkpointd worker` process whose stdout events are collected as they arrive.
pub struct WorkerProcess {
    child: Child,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl WorkerProcess {
    pub fn start(server: SocketAddr, args: &[&str]) -> Self {
        Self::start_with_env(server, args, &[])
    }

    /// Starts with extra environment variables, e.g. telemetry export intervals.
    pub fn start_with_env(server: SocketAddr, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_checkpointd"))
            .args(["worker", "--server", &format!("http://{server}")])
            .args(["--poll-interval", "50ms", "--cooldown", "50ms"])
            .args(["--admin-listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn checkpointd worker");
        let stdout = child.stdout.take().unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Self {
            child,
            lines,
            reader: Some(reader),
        }
    }

    /// Stdout lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL worker");
        self.child.wait().expect("reap worker");
    }

    pub fn terminate(&mut self) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
        self.wait()
    }

    /// Waits for the process to exit and for its output to be read.
    pub fn wait(&mut self) -> ExitStatus {
        let status = self.child.wait().expect("wait for worker");
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        status
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
