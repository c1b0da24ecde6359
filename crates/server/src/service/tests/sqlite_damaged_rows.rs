//! Rows damaged behind the store's back in ways only SQL can: digests and encoded metadata.

use std::sync::Arc;

use crate::service::Engine;
use checkpointd_core::domain::Step;
use checkpointd_sqlite::testing::{Db, checkpoint};
use checkpointd_storage::store::tests::{message, run};

#[tokio::test]
async fn damaged_digests_and_metadata_fall_back_instead_of_failing_the_read() {
    let db = Db::new();
    let engine = Engine::new(Arc::new(db.open().await));
    let run = run("default", "run-1");
    for step in 1..=3 {
        engine
            .save(&checkpoint(
                &run,
                step,
                step - 1,
                vec![message("user", "m")],
            ))
            .await
            .unwrap();
    }
    let raw = db.raw();
    raw.execute(
        "UPDATE checkpoints SET checksum = X'abcd' WHERE step = 3",
        [],
    )
    .unwrap();
    raw.execute(
        "UPDATE checkpoints SET metadata = 'garbage' WHERE step = 2",
        [],
    )
    .unwrap();
    let restored = engine.load_latest(&run).await.unwrap();
    assert_eq!(restored.checkpoint.step, Step::new(1));
    assert_eq!(restored.skipped_steps, vec![Step::new(3), Step::new(2)]);
}
