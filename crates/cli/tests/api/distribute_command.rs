//! `checkpointd db distribute`: its `--print` plan is the placement the schema lint checks
//! (so the command and the lint cannot drift), and on a Postgres without Citus it refuses.

use std::process::{Command, Output};

use checkpointd_postgres::placement::distribute_statements;

use crate::support::PgSchema;

fn distribute(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args(["db", "distribute"])
        .args(args)
        .env_remove("CHECKPOINTD_DATABASE")
        .output()
        .expect("run checkpointd")
}

#[test]
fn print_lists_the_declared_statements_and_connects_to_nothing() {
    let printed = distribute(&["--print", "--database", "postgres://127.0.0.1:1/none"]);
    assert!(printed.status.success(), "{printed:?}");
    let lines: Vec<String> = String::from_utf8(printed.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines, distribute_statements());
    assert_eq!(
        lines[0],
        "SELECT create_distributed_table('runs', 'tenant');"
    );
    assert!(lines.contains(&"SELECT create_reference_table('api_keys');".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributing_a_postgres_without_citus_fails_naming_the_extension() {
    let schema = PgSchema::create().await;
    let refused = distribute(&["--database", &schema.url()]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("no citus extension"), "{stderr}");
    assert!(refused.stdout.is_empty(), "{refused:?}");
}

#[test]
fn distributing_needs_a_database() {
    let refused = distribute(&[]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("pass --database"));
}
