//! A throwaway Redis: `redis-server` from the `PATH`, daemonized (so it leaves this process's
//! session) with its pid file in the services directory for the watchdog, no persistence, on a
//! free port of 127.0.0.1.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{PORT_ATTEMPTS, Services, free_port, run_as};

/// How long a started `redis-server` may take to answer PING; it usually takes milliseconds,
/// but the machine may be busy running every other test.
const READY_WITHIN: Duration = Duration::from_secs(20);

pub(super) fn start(services: &Services) -> Result<String, String> {
    let pid_file = services.dir.join("redis.pid");
    let log = services.dir.join("redis.log");
    for _ in 0..PORT_ATTEMPTS {
        let port = free_port()?;
        let mut command = Command::new("redis-server");
        command
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "yes"])
            .arg("--dir")
            .arg(&services.dir)
            .arg("--pidfile")
            .arg(&pid_file)
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        run_as(&mut command, services.owner);
        let status = command.status().map_err(|error| {
            format!(
                "tests need redis-server on the PATH ({error}). \
                 Install it: apt-get install redis-server"
            )
        })?;
        if !status.success() {
            return Err(format!("redis-server failed to start: {status}"));
        }
        if answers_ping_within(port, READY_WITHIN) {
            return Ok(format!("redis://127.0.0.1:{port}"));
        }
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    Err(format!(
        "redis-server never answered PING (tried {PORT_ATTEMPTS} ports); redis.log:\n{log}"
    ))
}

/// Polls until the daemon answers, since daemonizing returns before it listens; a port lost to
/// another process fails here (the daemon exits), and the caller tries another.
fn answers_ping_within(port: u16, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if answers_ping(port) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn answers_ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}
