//! `window_stops_short`, decided from stored sizes, agrees with the window a load reads.

use super::{TestBackend, checkpoint, run};
use crate::store::Which;
use checkpointd_core::domain::{JournalScope, MessageWindow, Step};

pub async fn a_window_stops_short_exactly_when_a_load_of_it_does(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "sizes");
    assert_eq!(
        store
            .window_stops_short(&key, Which::LatestBelow(None), MessageWindow::new(0, 1))
            .await
            .unwrap(),
        None,
        "no run, no checkpoint"
    );
    // Contents of 4, 3, 5 and 2 bytes.
    store
        .save(&checkpoint(&key, 1, 0, &["aaaa", "bbb"]))
        .await
        .unwrap();
    store
        .save(&checkpoint(&key, 2, 2, &["ccccc", "dd"]))
        .await
        .unwrap();
    for which in [
        Which::LatestBelow(None),
        Which::LatestBelow(Some(Step::new(2))),
        Which::At(Step::new(2)),
        Which::At(Step::new(9)),
    ] {
        for offset in 0..6 {
            for max_bytes in [0, 1, 4, 6, 7, 11, 12, 13, 14, usize::MAX] {
                let window = MessageWindow::new(offset, max_bytes);
                let loaded = store
                    .load_window(&key, which, window, JournalScope::None)
                    .await
                    .unwrap()
                    .filter(|snapshot| snapshot.checkpoint.continues())
                    .map(|snapshot| snapshot.checkpoint.step);
                let sized = store.window_stops_short(&key, which, window).await.unwrap();
                assert_eq!(sized, loaded, "{which:?} from {offset}, {max_bytes} bytes");
            }
        }
    }
}
