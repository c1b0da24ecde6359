//! The outbox's upkeep, as a behaviour suite written once and run against memory, SQLite and
//! Postgres: a checkpoint's first quarantine writes its `integrity.corrupt` event with the
//! quarantine (once, whoever finds it again), and pruning deletes only what is settled and old.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::notification_tests::{endpoint, finding, tenant};
use crate::notifications::{
    DeliveryFilter, DeliveryStatus, EventKind, NotificationStore, OutboxPruned, Settlement,
};
use crate::store::CheckpointStore;
use checkpointd_core::domain::Step;
use checkpointd_core::notify::{CorruptFinding, corrupt_event};
use checkpointd_core::testing::{checkpoint, run};
use checkpointd_core::time::whole_micros;

/// Expands to a module `$backend` with one test per behaviour, each on a fresh database made
/// by `$create`: a future of its checkpoint store, its notification store (the same database)
/// and a guard dropped after them.
#[macro_export]
macro_rules! outbox_behaviours {
    ($backend:ident, $create:expr) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;

            $crate::outbox_behaviours!(@tests $create;
                a_first_quarantine_writes_one_corrupt_event_with_a_delivery_per_endpoint,
                pruning_deletes_old_settled_deliveries_and_old_events_left_without_any,
            );
        }
    };
    (@tests $create:expr; $($behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                let (checkpoints, outbox, guard) = $create.await;
                $crate::outbox_tests::$behaviour(checkpoints, outbox).await;
                #[allow(dropping_copy_types)]
                drop(guard);
            }
        )*
    };
}

#[cfg(test)]
outbox_behaviours!(memory, async {
    let outbox = Arc::new(crate::notifications::MemoryNotifications::new());
    let store = Arc::new(crate::store::MemoryStore::with_outbox(outbox.clone()));
    (
        store as Arc<dyn CheckpointStore>,
        outbox as Arc<dyn NotificationStore>,
        (),
    )
});

type Checkpoints = Arc<dyn CheckpointStore>;
type Outbox = Arc<dyn NotificationStore>;

pub async fn a_first_quarantine_writes_one_corrupt_event_with_a_delivery_per_endpoint(
    checkpoints: Checkpoints,
    outbox: Outbox,
) {
    for (tenant_name, id, created_secs) in
        [("acme", "e1", 1), ("acme", "e2", 2), ("other", "e3", 3)]
    {
        let endpoint = endpoint(tenant_name, id, created_secs);
        outbox.create_endpoint(&endpoint).await.unwrap();
    }
    let key = run("acme", "run-q");
    for step in [1, 2] {
        let saved = checkpoints.save(&checkpoint(&key, step, 0, &[])).await;
        saved.unwrap();
    }

    // Found again (another load, a Validate, a scrub): quarantined already, told already. A
    // step that holds nothing is not quarantined, so nothing is told.
    for (step, reason) in [(2, "checksum mismatch"), (2, "found again"), (9, "nothing")] {
        let quarantined = checkpoints.quarantine(&key, Step::new(step), reason).await;
        quarantined.unwrap();
    }

    let events = outbox.events_after(&tenant("acme"), 0, 100).await.unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event.kind, EventKind::IntegrityCorrupt);
    assert_eq!(event.run_id.as_deref(), Some("run-q"));
    let payload = String::from_utf8(event.payload.clone()).unwrap();
    for part in [
        r#""type":"integrity.corrupt""#,
        r#""step":2"#,
        r#""found_by":"quarantine""#,
        r#""detail":"checksum mismatch""#,
    ] {
        assert!(payload.contains(part), "{part} in {payload}");
    }
    let deliveries = outbox
        .list_deliveries(&tenant("acme"), &DeliveryFilter::default(), 10)
        .await
        .unwrap();
    let mut endpoints: Vec<&str> = deliveries
        .iter()
        .map(|delivery| delivery.endpoint_id.as_str())
        .collect();
    endpoints.sort();
    assert_eq!(endpoints, ["e1", "e2"]);
    assert!(
        deliveries
            .iter()
            .all(|delivery| delivery.event_id == event.id
                && delivery.status() == DeliveryStatus::Pending)
    );
    assert!(
        outbox
            .events_after(&tenant("other"), 0, 100)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn pruning_deletes_old_settled_deliveries_and_old_events_left_without_any(
    _checkpoints: Checkpoints,
    outbox: Outbox,
) {
    let now = whole_micros(SystemTime::now());
    let old = now - Duration::from_secs(8 * 24 * 3600);
    let horizon = now - Duration::from_secs(7 * 24 * 3600);
    outbox
        .create_endpoint(&endpoint("acme", "e1", 1))
        .await
        .unwrap();
    // Each of its own step, so no two payloads are alike.
    let at_step = |tenant_name: &str, created_at: SystemTime, step: u64| {
        let finding = CorruptFinding {
            step: Some(step),
            ..finding()
        };
        corrupt_event(&tenant(tenant_name), &finding, created_at)
    };
    let append = |created_at: SystemTime, step: u64| {
        let (outbox, event) = (outbox.clone(), at_step("acme", created_at, step));
        async move { outbox.append_event(&event).await.unwrap() }
    };
    // Old: one delivered, one given up, one failing (to be retried), one never tried.
    let delivered = append(old, 1).await;
    let given_up = append(old, 2).await;
    let failing = append(old, 3).await;
    let pending = append(old, 4).await;
    // Recent and delivered: settled, but within the retention.
    let recent = append(now, 5).await;
    let settle = |event_id: String, outcome: Settlement| {
        let outbox = outbox.clone();
        async move { assert!(outbox.settle(&event_id, "e1", &outcome, now).await.unwrap()) }
    };
    settle(delivered.id.clone(), Settlement::Delivered).await;
    let error = "503".to_owned();
    settle(
        given_up.id.clone(),
        Settlement::GiveUp {
            error: error.clone(),
        },
    )
    .await;
    let retry_at = now + Duration::from_secs(60);
    settle(
        failing.id.clone(),
        Settlement::RetryAt {
            at: retry_at,
            error,
        },
    )
    .await;
    settle(recent.id.clone(), Settlement::Delivered).await;
    // An old event of a tenant with no endpoint: it never had a delivery.
    outbox
        .append_event(&at_step("quiet", old, 6))
        .await
        .unwrap();

    let pruned = outbox.prune_outbox(horizon).await.unwrap();
    assert_eq!(
        pruned,
        OutboxPruned {
            deliveries: 2,
            events: 3
        }
    );

    let kept: Vec<String> = outbox
        .events_after(&tenant("acme"), 0, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|event| event.id)
        .collect();
    assert_eq!(
        kept,
        [failing.id.clone(), pending.id.clone(), recent.id.clone()]
    );
    assert!(
        outbox
            .events_after(&tenant("quiet"), 0, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let mut statuses: Vec<(String, DeliveryStatus)> = outbox
        .list_deliveries(&tenant("acme"), &DeliveryFilter::default(), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|delivery| (delivery.event_id.clone(), delivery.status()))
        .collect();
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        statuses,
        [
            (failing.id, DeliveryStatus::Failing),
            (pending.id, DeliveryStatus::Pending),
            (recent.id, DeliveryStatus::Delivered),
        ]
    );
    // Nothing more is old and settled: a second pass deletes nothing.
    assert_eq!(
        outbox.prune_outbox(horizon).await.unwrap(),
        OutboxPruned::default()
    );
}
