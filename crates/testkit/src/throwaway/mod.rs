//! Postgres, Redis and PgBouncers of this test process's own, for when `TEST_DATABASE_URL` /
//! `TEST_REDIS_URL` / `TEST_PGBOUNCER_*_URL` are unset: started lazily from the binaries on the machine, on the first
//! call that needs one (a test binary that never touches a database starts nothing), shared by
//! every test in the process, and removed by a watchdog once the process has exited, however
//! it ended.
//!
//! One instance per test process rather than one per `cargo test`: the process's exit is the
//! one event that is certain (a pipe closes), whereas a shared instance would need a reference
//! count across processes that cargo starts one after another. The price is an `initdb`
//! (about a second and a half) per test binary that needs Postgres.

mod pgbouncer;
mod postgres;
mod redis;
mod upstream;
mod watchdog;

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command};
use std::sync::OnceLock;

pub(crate) use pgbouncer::PoolerUrls;

use crate::pg_binaries::cluster_owner;

/// The directory every instance of this process lives in, and the watchdog that removes it.
struct Services {
    dir: PathBuf,
    /// Whom the instances run as (the `postgres` user when this process is root).
    owner: Option<(u32, u32)>,
    /// Never written and never closed by this process: the kernel closes it when the process
    /// exits, and that end of file is the watchdog's signal.
    _lifeline: ChildStdin,
}

/// The URL of this process's Postgres (database `test`, user `postgres`, trust), started on
/// the first call; panics naming the package to install when the binaries are missing.
pub(crate) fn database_url() -> String {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    started(&URL, postgres::start)
}

/// The Postgres the tests use: `TEST_DATABASE_URL`, or this process's own ([`database_url`]).
/// Here rather than in `crate::postgres`, which answers with it, so the PgBouncers can sit in
/// front of it without this folder importing its parent's modules back.
pub(crate) fn tests_database_url() -> String {
    std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| database_url())
}

/// The URL of this process's Redis, started on the first call; panics naming the package to
/// install when `redis-server` is missing.
pub(crate) fn redis_url() -> String {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    started(&URL, redis::start)
}

/// The URLs of this process's two PgBouncers in front of the tests' Postgres, started on the
/// first call; panics naming the package to install when `pgbouncer` is missing.
pub(crate) fn pgbouncer_urls() -> PoolerUrls {
    static URLS: OnceLock<Result<PoolerUrls, String>> = OnceLock::new();
    started(&URLS, pgbouncer::start)
}

/// A failure is kept as well as a success, so every test asking afterwards fails with the same
/// message instead of each trying (and failing) again.
fn started<T: Clone>(
    url: &'static OnceLock<Result<T, String>>,
    start: impl FnOnce(&Services) -> Result<T, String>,
) -> T {
    url.get_or_init(|| services().and_then(start))
        .clone()
        .unwrap_or_else(|message| panic!("{message}"))
}

fn services() -> Result<&'static Services, String> {
    static SERVICES: OnceLock<Result<Services, String>> = OnceLock::new();
    SERVICES
        .get_or_init(|| {
            let owner = cluster_owner()?;
            let dir = tempfile::Builder::new()
                .prefix("checkpointd-test-")
                .tempdir()
                .map_err(|error| format!("a temporary directory for the test databases: {error}"))?
                .keep();
            if let Some((uid, gid)) = owner {
                std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                    .map_err(|error| format!("chown {} to postgres: {error}", dir.display()))?;
            }
            let lifeline = watchdog::spawn(&dir, owner).inspect_err(|_| {
                let _ = std::fs::remove_dir_all(&dir);
            })?;
            Ok(Services {
                dir,
                owner,
                _lifeline: lifeline,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A port free now; whoever binds it next may lose a race, which is why starts retry.
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|error| format!("find a free port: {error}"))
}

/// How many ports a start tries before giving up: another process may take a free port
/// between our finding it and the server binding it.
const PORT_ATTEMPTS: usize = 3;

/// Runs `command` as `owner` (the `postgres` user when this process is root: Postgres and
/// PgBouncer refuse root, and the watchdog, running as that user, must be able to kill it).
fn run_as(command: &mut Command, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
}

fn path_str(path: &Path) -> Result<&str, String> {
    path.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))
}
