//! With `TEST_PGBOUNCER_TRANSACTION_URL` / `TEST_PGBOUNCER_SESSION_URL` unset, a test process
//! gets a transaction-mode and a session-mode PgBouncer of its own in front of its Postgres,
//! a pooled database can be made and used through them, and once the process has ended both
//! PgBouncers are gone; without pgbouncer installed, a pooler test fails naming the package.
//!
//! Each case runs this binary again as a child (its `child_...` test, which does nothing unless
//! its variable is set), since what is proven is what happens after a process exits.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use checkpointd_testkit::{
    PooledDatabase, connect_or_panic, session_pooler_url, transaction_pooler_url,
    url_with_database, wait_until,
};

/// Set (to anything) to run [`child_uses_its_throwaway_poolers`].
const CHILD: &str = "CHECKPOINTD_TESTKIT_CHILD_POOLERS";

/// `pool_mode` as the PgBouncer at `url` reports it on its admin console (which takes only the
/// simple query protocol): what the pooler really runs with, not what its URL suggests.
async fn pool_mode(url: &str) -> String {
    let console = connect_or_panic(&url_with_database(url, "pgbouncer")).await;
    let rows = console
        .simple_query("SHOW CONFIG")
        .await
        .expect("SHOW CONFIG");
    rows.iter()
        .find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) if row.get(0) == Some("pool_mode") => {
                row.get(1).map(str::to_owned)
            }
            _ => None,
        })
        .expect("pool_mode in SHOW CONFIG")
}

#[tokio::test]
async fn child_uses_its_throwaway_poolers() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let (transaction, session) = (transaction_pooler_url(), session_pooler_url());
    assert_ne!(transaction, session);
    assert_eq!(pool_mode(&transaction).await, "transaction");
    assert_eq!(pool_mode(&session).await, "session");

    // What a pooler test does: a database made through the session pooler, used through both.
    let database = PooledDatabase::create().await;
    for url in [database.transaction_url(), database.session_url()] {
        let name: String = connect_or_panic(&url)
            .await
            .query_one("SELECT current_database()", &[])
            .await
            .expect("SELECT current_database()")
            .get(0);
        assert_eq!(name, database.name, "through {url}");
    }
    // The child's TMPDIR is its own, so the one services directory in it is this process's.
    let services = std::fs::read_dir(std::env::temp_dir())
        .expect("the child's temp dir")
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.join("pgbouncer-session.pid").exists())
        .expect("the services directory");
    let pid = |mode: &str| {
        std::fs::read_to_string(services.join(format!("pgbouncer-{mode}.pid"))).expect("pid file")
    };
    println!("REPORT {} {}", pid("transaction"), pid("session"));
}

/// Runs the child test `name` with every test service variable unset, in a temp dir of its own
/// (open to all: as root, the watchdog runs as the `postgres` user and must reach into it).
fn run_child(
    name: &str,
    variable: &str,
    extra: Option<(&str, &str)>,
) -> (Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().expect("a temp dir for the child");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod the child's temp dir");
    let mut command = Command::new(std::env::current_exe().expect("this test binary"));
    command
        .args(["--exact", name, "--nocapture"])
        .env(variable, "1")
        .env("TMPDIR", tmp.path());
    for unset in [
        "TEST_DATABASE_URL",
        "TEST_PGBOUNCER_TRANSACTION_URL",
        "TEST_PGBOUNCER_SESSION_URL",
    ] {
        command.env_remove(unset);
    }
    if let Some((key, value)) = extra {
        command.env(key, value);
    }
    (command.output().expect("run the child"), tmp)
}

/// The watchdog acts once it sees the child's exit, so this waits (bounded) for it to finish.
async fn assert_all_removed(tmp: &Path, pids: &[u32]) {
    let alive = |pid: &u32| Path::new(&format!("/proc/{pid}")).exists();
    wait_until("the child's PgBouncers and directory are gone", || {
        let empty = std::fs::read_dir(tmp)
            .map(|mut entries| entries.next().is_none())
            .unwrap_or(false);
        let gone = empty && !pids.iter().any(alive);
        async move { gone }
    })
    .await;
}

#[tokio::test]
async fn a_process_gets_its_own_transaction_and_session_poolers_and_leaves_nothing_behind() {
    let (output, tmp) = run_child("child_uses_its_throwaway_poolers", CHILD, None);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pids: Vec<u32> = stdout
        .lines()
        .find_map(|line| line.strip_prefix("REPORT "))
        .unwrap_or_else(|| panic!("the child reported nothing: {stdout}"))
        .split(' ')
        .map(|pid| pid.trim().parse().expect("a pid"))
        .collect();
    assert_eq!(pids.len(), 2, "{stdout}");
    assert_all_removed(tmp.path(), &pids).await;
}

/// Set (to anything) to run [`child_without_pgbouncer_asks_for_a_pooler`].
const CHILD_WITHOUT_PGBOUNCER: &str = "CHECKPOINTD_TESTKIT_CHILD_WITHOUT_PGBOUNCER";

#[test]
fn child_without_pgbouncer_asks_for_a_pooler() {
    if std::env::var_os(CHILD_WITHOUT_PGBOUNCER).is_none() {
        return;
    }
    transaction_pooler_url();
}

#[tokio::test]
async fn without_pgbouncer_a_pooler_test_fails_naming_the_package() {
    // The binary named outright, since /usr/sbin/pgbouncer is found whatever the PATH.
    let (output, tmp) = run_child(
        "child_without_pgbouncer_asks_for_a_pooler",
        CHILD_WITHOUT_PGBOUNCER,
        Some(("CHECKPOINTD_TEST_PGBOUNCER", "/nonexistent/pgbouncer")),
    );
    // With --nocapture the panic's message is on stderr.
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("apt-get install pgbouncer"),
        "the failure names the package: {said}"
    );
    assert_all_removed(tmp.path(), &[]).await;
}
