//! With `TEST_DATABASE_URL` and `TEST_REDIS_URL` unset, a test process gets a Postgres and a
//! Redis of its own that answer, and once the process has ended (returned, panicked or
//! aborted) their processes and their directory are gone.
//!
//! Each case runs this binary again as a child (its `child_...` test, which does nothing unless
//! [`CHILD`] is set), since what is proven is what happens after a process exits.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use checkpointd_testkit::{
    connect_or_panic, database_url, redis_connection, redis_url, wait_until,
};

/// How the child ends: `return`, `panic` or `abort`.
const CHILD: &str = "CHECKPOINTD_TESTKIT_CHILD_ENDING";

/// What the child saw, for the parent to check after it has gone.
struct Report {
    dir: PathBuf,
    postmaster: u32,
    redis: u32,
}

#[tokio::test]
async fn child_uses_its_throwaway_postgres_and_redis() {
    let Ok(ending) = std::env::var(CHILD) else {
        return;
    };
    assert!(std::env::var_os("TEST_DATABASE_URL").is_none());
    let url = database_url();
    assert!(
        url.starts_with("postgres://postgres@127.0.0.1:") && url.ends_with("/test"),
        "{url}"
    );
    let client = connect_or_panic(&url).await;
    let data: String = client
        .query_one("SHOW data_directory", &[])
        .await
        .expect("SHOW data_directory")
        .get(0);
    let data = Path::new(&data);
    let pid_file = std::fs::read_to_string(data.join("postmaster.pid")).expect("postmaster.pid");
    let postmaster = pid_file.lines().next().expect("the postmaster's pid");

    let mut redis = redis_connection(&redis_url()).await;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut redis)
        .await
        .expect("INFO server");
    let redis_pid = info
        .lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .expect("process_id in INFO")
        .trim();
    let dir = data.parent().expect("the services directory").display();
    println!("REPORT {dir} {postmaster} {redis_pid}");
    match ending.as_str() {
        "panic" => panic!("the child panics on purpose"),
        "abort" => std::process::abort(),
        _ => {}
    }
}

fn run_child(ending: &str) -> (Output, Report) {
    let output = Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "--exact",
            "child_uses_its_throwaway_postgres_and_redis",
            "--nocapture",
        ])
        .env(CHILD, ending)
        .env_remove("TEST_DATABASE_URL")
        .env_remove("TEST_REDIS_URL")
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = stdout
        .lines()
        .find_map(|line| line.strip_prefix("REPORT "))
        .unwrap_or_else(|| {
            panic!(
                "the child reported nothing: {stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    let fields: Vec<&str> = report.split(' ').collect();
    let report = Report {
        dir: PathBuf::from(fields[0]),
        postmaster: fields[1].parse().expect("postmaster pid"),
        redis: fields[2].parse().expect("redis pid"),
    };
    (output, report)
}

/// The watchdog acts once it sees the child's exit, so this waits (bounded) for it to finish.
async fn assert_all_removed(report: &Report) {
    let alive = |pid: u32| Path::new(&format!("/proc/{pid}")).exists();
    wait_until("the child's Postgres, Redis and directory are gone", || {
        let gone = !report.dir.exists() && !alive(report.postmaster) && !alive(report.redis);
        async move { gone }
    })
    .await;
}

#[tokio::test]
async fn a_process_gets_its_own_postgres_and_redis_and_leaves_nothing_behind() {
    let (output, report) = run_child("return");
    assert!(output.status.success(), "{output:?}");
    assert_all_removed(&report).await;
}

#[tokio::test]
async fn a_panicking_process_leaves_nothing_behind() {
    let (output, report) = run_child("panic");
    assert!(!output.status.success(), "{output:?}");
    assert_all_removed(&report).await;
}

#[tokio::test]
async fn an_aborted_process_leaves_nothing_behind() {
    let (output, report) = run_child("abort");
    assert!(!output.status.success(), "{output:?}");
    assert_all_removed(&report).await;
}

/// Set (to anything) to run [`child_without_redis_server_asks_for_a_redis`].
const CHILD_WITHOUT_REDIS: &str = "CHECKPOINTD_TESTKIT_CHILD_WITHOUT_REDIS";

#[test]
fn child_without_redis_server_asks_for_a_redis() {
    if std::env::var_os(CHILD_WITHOUT_REDIS).is_none() {
        return;
    }
    redis_url();
}

#[tokio::test]
async fn without_redis_server_on_the_path_a_test_fails_naming_the_package() {
    // A temp dir of the child's own, to see that it leaves nothing there either. Open to all:
    // as root, the watchdog runs as the `postgres` user and must reach into it.
    let tmp = tempfile::tempdir().expect("a temp dir for the child");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod the child's temp dir");
    let output = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "child_without_redis_server_asks_for_a_redis"])
        .env(CHILD_WITHOUT_REDIS, "1")
        .env("PATH", "/nonexistent")
        .env("TMPDIR", tmp.path())
        .env_remove("TEST_REDIS_URL")
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{stdout}");
    assert!(
        stdout.contains("apt-get install redis-server"),
        "the failure names the package: {stdout}"
    );
    wait_until("the child's temp dir is empty again", || {
        let empty = std::fs::read_dir(tmp.path())
            .map(|mut entries| entries.next().is_none())
            .unwrap_or(false);
        async move { empty }
    })
    .await;
}
