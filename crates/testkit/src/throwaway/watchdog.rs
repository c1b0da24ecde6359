//! The process that removes this test process's databases once it has exited: a shell that
//! waits for end of file on its stdin, whose only writer is the test process. The kernel closes
//! that pipe however the test process ends (return, panic, abort, SIGKILL), so no exit hook has
//! to run.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};

/// Kills Redis and the PgBouncers (a pid file each) and stops Postgres (if it was started: its data directory has a
/// `postmaster.pid`, and `pg_bin` says where `pg_ctl` is), then deletes the directory.
const SCRIPT: &str = r#"
read -r _ignored
for pid_file in "$1"/*.pid; do
  if [ -f "$pid_file" ]; then kill -9 "$(cat "$pid_file")" 2>/dev/null; fi
done
if [ -f "$1/postgres/postmaster.pid" ]; then
  "$(cat "$1/pg_bin")/pg_ctl" -D "$1/postgres" -m immediate -w stop >/dev/null 2>&1
fi
rm -rf "$1"
"#;

/// Starts the watchdog for `dir` and returns the write end of its stdin, to be held until this
/// process exits. It runs as `owner` (who owns `dir` and the instances), in a process group of
/// its own, so a Ctrl-C that stops `cargo test` does not stop it before it has cleaned up.
pub(super) fn spawn(dir: &Path, owner: Option<(u32, u32)>) -> Result<ChildStdin, String> {
    // By path, so a test run with a bare PATH still gets its watchdog.
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", SCRIPT, "checkpointd-test-watchdog"])
        .arg(dir)
        // Its own PATH for `cat`, `rm` and `kill`: the test's may be anything.
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    // The pipe's write end is close-on-exec (std makes every descriptor so), so no process this
    // test starts later keeps the watchdog waiting.
    let mut child = command
        .spawn()
        .map_err(|error| format!("start the test databases' watchdog (sh): {error}"))?;
    Ok(child.stdin.take().expect("stdin was piped"))
}
