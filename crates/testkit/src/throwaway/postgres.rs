//! A throwaway Postgres: `initdb` into the services directory, configured for speed over
//! durability (the data dies with the process anyway), started with `pg_ctl` on a free port of
//! 127.0.0.1 with trust authentication, and a `test` database in it, as the URL names.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use super::{PORT_ATTEMPTS, Services, free_port, path_str, run_as};
use crate::pg_binaries::{initdb_args, postgres_bin};

/// Durability off: nothing here must survive a crash of the machine, and fsyncs are most of
/// what makes a test database slow.
const SETTINGS: &str = "\nlisten_addresses = '127.0.0.1'\nfsync = off\n\
                        synchronous_commit = off\nfull_page_writes = off\n";

pub(super) fn start(services: &Services) -> Result<String, String> {
    let bin = postgres_bin()?;
    // For the watchdog, which needs pg_ctl to stop the cluster.
    std::fs::write(services.dir.join("pg_bin"), bin.as_os_str().as_bytes())
        .map_err(|error| format!("write pg_bin: {error}"))?;
    let data = services.dir.join("postgres");
    let run = |program: &str, args: &[&str]| run(&bin, program, args, services.owner);
    run("initdb", &initdb_args(path_str(&data)?))?;
    let sockets = format!("unix_socket_directories = '{}'\n", path_str(&services.dir)?);
    std::fs::OpenOptions::new()
        .append(true)
        .open(data.join("postgresql.conf"))
        .and_then(|mut conf| conf.write_all(format!("{SETTINGS}{sockets}").as_bytes()))
        .map_err(|error| format!("append to postgresql.conf: {error}"))?;
    let log = services.dir.join("postgres.log");
    let mut failure = String::new();
    for _ in 0..PORT_ATTEMPTS {
        let port = free_port()?.to_string();
        let started = run(
            "pg_ctl",
            &[
                "-D",
                path_str(&data)?,
                "-l",
                path_str(&log)?,
                "-o",
                &format!("-p {port}"),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        match started {
            Ok(()) => {
                run(
                    "createdb",
                    &["-h", "127.0.0.1", "-p", &port, "-U", "postgres", "test"],
                )?;
                return Ok(format!("postgres://postgres@127.0.0.1:{port}/test"));
            }
            Err(error) => failure = error,
        }
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    Err(format!("{failure}\npostgres.log:\n{log}"))
}

fn run(bin: &Path, program: &str, args: &[&str], owner: Option<(u32, u32)>) -> Result<(), String> {
    let mut command = Command::new(bin.join(program));
    command.args(args);
    run_as(&mut command, owner);
    let output = command
        .output()
        .map_err(|error| format!("run {}: {error}", bin.join(program).display()))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{program} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}
