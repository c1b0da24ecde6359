//! A throwaway pair of PgBouncers (transaction and session mode, as `.ci/pgbouncer.sh` starts
//! for CI) in front of the test Postgres, each a foreground child of this process on a free port
//! of 127.0.0.1, with its pid file in the services directory for the watchdog.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::upstream::Upstream;
use super::{PORT_ATTEMPTS, Services, free_port, path_str, run_as};

/// The two pooler URLs, transaction mode first.
#[derive(Clone)]
pub(crate) struct PoolerUrls {
    pub(crate) transaction: String,
    pub(crate) session: String,
}

/// How long a started pgbouncer may take to log that it is up; usually milliseconds.
const READY_WITHIN: Duration = Duration::from_secs(20);

/// In front of the Postgres the tests use (`TEST_DATABASE_URL` or the throwaway one, started
/// here if need be, after the binary is found); the poolers log in to it as its user, and their
/// URLs name its database.
pub(super) fn start(services: &Services) -> Result<PoolerUrls, String> {
    let bin = pgbouncer_bin()?;
    let upstream = Upstream::parse(&super::tests_database_url())?;
    let url = |port: u16| {
        let Upstream { user, database, .. } = &upstream;
        format!("postgres://{user}@127.0.0.1:{port}/{database}")
    };
    Ok(PoolerUrls {
        transaction: url(start_one(services, &bin, &upstream, "transaction")?),
        session: url(start_one(services, &bin, &upstream, "session")?),
    })
}

/// The variable naming the pgbouncer binary to run, for a build of one's own (and for the test
/// that shows what happens without one, which the PATH alone cannot hide).
const BIN_VARIABLE: &str = "CHECKPOINTD_TEST_PGBOUNCER";

/// [`BIN_VARIABLE`], else `pgbouncer` on the PATH, else where Debian's package puts it
/// (`/usr/sbin` is often not on a non-root PATH).
fn pgbouncer_bin() -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = match std::env::var_os(BIN_VARIABLE) {
        Some(bin) => vec![bin.into()],
        None => std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join("pgbouncer"))
            .chain([PathBuf::from("/usr/sbin/pgbouncer")])
            .collect(),
    };
    candidates
        .iter()
        .find(|candidate| candidate.is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "the pooler tests need pgbouncer (looked for {candidates:?}). \
                 Install it: apt-get install pgbouncer"
            )
        })
}

fn start_one(
    services: &Services,
    bin: &Path,
    upstream: &Upstream,
    mode: &str,
) -> Result<u16, String> {
    let ini = services.dir.join(format!("pgbouncer-{mode}.ini"));
    let log = services.dir.join(format!("pgbouncer-{mode}.log"));
    let mut failure = String::new();
    for _ in 0..PORT_ATTEMPTS {
        let port = free_port()?;
        std::fs::write(&ini, config(upstream, mode, port, path_str(&log)?))
            .map_err(|error| format!("write {}: {error}", ini.display()))?;
        // A fresh log per attempt, so readiness is read from this attempt's lines only.
        let _ = std::fs::remove_file(&log);
        let mut command = Command::new(bin);
        command
            .arg(&ini)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // PgBouncer refuses to run as root; as the owner, the watchdog can also kill it.
        run_as(&mut command, services.owner);
        let mut child = command
            .spawn()
            .map_err(|error| format!("run {}: {error}", bin.display()))?;
        // Written by us rather than by pgbouncer, so the watchdog knows of it from the start.
        std::fs::write(
            services.dir.join(format!("pgbouncer-{mode}.pid")),
            child.id().to_string(),
        )
        .map_err(|error| format!("write pgbouncer-{mode}.pid: {error}"))?;
        match up_within(&mut child, &log, READY_WITHIN) {
            Ok(()) => return Ok(port),
            Err(error) => failure = error,
        }
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    Err(format!(
        "pgbouncer ({mode}) {failure}; pgbouncer-{mode}.log:\n{log}"
    ))
}

/// Polls its log for "process up", which it writes after binding its port; one that lost the
/// port to another process exits instead, and the caller tries another port.
fn up_within(child: &mut Child, log: &Path, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("exited ({status})"));
        }
        if std::fs::read_to_string(log).is_ok_and(|text| text.contains("process up")) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(format!("was not up within {limit:?}"))
}

/// The settings of `.ci/pgbouncer.sh`, so a pooler test behaves alike here and in CI.
fn config(upstream: &Upstream, mode: &str, port: u16, log: &str) -> String {
    let Upstream {
        host,
        port: server_port,
        user,
        password,
        ..
    } = upstream;
    let password = password
        .as_ref()
        .map(|p| format!(" password={p}"))
        .unwrap_or_default();
    format!(
        "[databases]\n* = host={host} port={server_port} user={user}{password}\n\n\
         [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
         auth_type = any\npool_mode = {mode}\ndefault_pool_size = 4\nmin_pool_size = 0\n\
         reserve_pool_size = 0\nmax_client_conn = 1000\nmax_db_connections = 0\n\
         server_reset_query = DISCARD ALL\nignore_startup_parameters = extra_float_digits\n\
         logfile = {log}\nadmin_users = {user}\n"
    )
}
