//! What only a database file shows: data surviving a reopen, migrations applied once, and a
//! deleted run leaving no row behind in any table.

use super::*;
use checkpointd_storage::store::RetentionStore;

#[tokio::test]
async fn data_survives_closing_and_reopening_the_file() {
    let db = Db::new();
    let run = run("default", "run-1");
    let saved = {
        let store = db.open().await;
        store
            .record_tool_result(&tool(&run, "c1", "42"))
            .await
            .unwrap();
        store
            .save(&checkpoint(&run, 3, 0, vec![message("user", "hi")]))
            .await
            .unwrap()
    };
    let store = db.open().await;
    let snapshot = load_at(&store, &run, 3).await;
    assert_eq!(snapshot.checkpoint.id, saved.id);
    snapshot.checkpoint.verify(&snapshot.tools).unwrap();
    // The next save continues the message log where it was left.
    store
        .save(&checkpoint(&run, 4, 1, vec![message("assistant", "yo")]))
        .await
        .unwrap();
    let versions: Vec<i64> = db
        .raw()
        .prepare("SELECT version FROM checkpointd_migrations")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        versions,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        "migrations apply once"
    );
}

#[tokio::test]
async fn deleting_a_run_leaves_no_row_in_any_table() {
    let db = Db::new();
    let store = db.open().await;
    let run = run("default", "run-1");
    store
        .save(&checkpoint(&run, 1, 0, vec![message("user", "hi")]))
        .await
        .unwrap();
    store
        .record_tool_result(&tool(&run, "c1", "x"))
        .await
        .unwrap();
    store
        .pin(&run, Some(Step::new(1)), "operator")
        .await
        .unwrap();
    assert_eq!(store.delete_run(&run).await.unwrap(), 1);
    let raw = db.raw();
    for table in [
        "runs",
        "checkpoints",
        "messages",
        "tool_results",
        "checkpoint_pins",
    ] {
        let rows: i64 = raw
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(rows, 0, "{table}");
    }
}
