//! The `NotificationStore` behaviour suite, with the queue of the same database: written once
//! and run against memory, SQLite and Postgres. It proves the outbox is written with the
//! transition that raised its event, and nothing without it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::notifications::{
    DeliveryFilter, DeliveryStatus, EventKind, NotificationStore, Settlement, WebhookEndpoint,
};
use crate::queue::ClaimBatch;
use crate::queue::{NewTask, RetryPolicy, TaskQueue, Transition};
use checkpointd_core::domain::{RunId, Tenant};
use checkpointd_core::error::ErrorCode;
use checkpointd_core::notify::{CorruptFinding, corrupt_event};
use checkpointd_core::time::whole_micros;

/// Expands to a module `$backend` with one test per behaviour, each on a fresh database made
/// by `$create`: a future of its queue, its notification store and a guard dropped after them.
#[macro_export]
macro_rules! notification_behaviours {
    ($backend:ident, $create:expr) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;

            $crate::notification_behaviours!(@tests $create;
                a_transition_writes_its_event_with_a_delivery_per_endpoint_of_its_tenant,
                a_refused_transition_writes_no_event,
                the_reaper_writes_a_dead_event_for_each_task_it_buries,
                endpoints_are_listed_and_deleted_within_their_tenant_only,
                a_taken_delivery_is_leased_then_settled_as_delivered_failing_or_given_up,
                an_appended_event_reaches_the_endpoints_and_the_watch_in_order,
            );
        }
    };
    (@tests $create:expr; $($behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                let (queue, store, guard) = $create.await;
                $crate::notification_tests::$behaviour(queue, store).await;
                #[allow(dropping_copy_types)]
                drop(guard);
            }
        )*
    };
}

#[cfg(test)]
notification_behaviours!(memory, async {
    let queue = Arc::new(crate::queue::MemoryQueue::new());
    let store: Arc<dyn NotificationStore> = queue.notifications();
    (queue as Arc<dyn TaskQueue>, store, ())
});

type Queue = Arc<dyn TaskQueue>;
type Store = Arc<dyn NotificationStore>;

pub(crate) fn tenant(name: &str) -> Tenant {
    Tenant::parse(name).unwrap()
}

pub(crate) fn endpoint(tenant_name: &str, id: &str, created_secs: u64) -> WebhookEndpoint {
    WebhookEndpoint {
        id: id.to_owned(),
        tenant: tenant(tenant_name),
        url: format!("http://127.0.0.1:9/{id}"),
        description: format!("endpoint {id}"),
        salt: vec![7; 16],
        created_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + created_secs),
    }
}

/// A task of `tenant_name` claimed with one attempt allowed, so a failure kills it.
async fn running_task(queue: &Queue, tenant_name: &str) -> crate::queue::Task {
    let tenant = tenant(tenant_name);
    queue
        .enqueue(
            &tenant,
            NewTask {
                run_id: RunId::parse("run-1").unwrap(),
                input: Vec::new(),
                idempotency_key: None,
                retry_policy: RetryPolicy {
                    max_attempts: 1,
                    ..RetryPolicy::default()
                },
                auto_resume_hitl: false,
            },
        )
        .await
        .unwrap();
    let mut claimed = queue
        .claim(
            &tenant,
            "worker",
            Duration::from_secs(30),
            ClaimBatch::up_to(1),
            SystemTime::now(),
        )
        .await
        .unwrap();
    claimed.pop().expect("the task just enqueued")
}

pub async fn a_transition_writes_its_event_with_a_delivery_per_endpoint_of_its_tenant(
    queue: Queue,
    store: Store,
) {
    store
        .create_endpoint(&endpoint("acme", "e1", 1))
        .await
        .unwrap();
    store
        .create_endpoint(&endpoint("acme", "e2", 2))
        .await
        .unwrap();
    store
        .create_endpoint(&endpoint("other", "e3", 3))
        .await
        .unwrap();
    let task = running_task(&queue, "acme").await;
    queue
        .update(
            &tenant("acme"),
            &task.id,
            Transition::RequestApproval {
                attempt: task.attempt,
                action: "send".into(),
                details: Vec::new(),
            },
            SystemTime::now(),
        )
        .await
        .unwrap();
    let events = store.events_after(&tenant("acme"), 0, 10).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, EventKind::TaskInputRequired);
    assert_eq!(events[0].task_id.as_deref(), Some(task.id.as_str()));
    assert!(events[0].sequence > 0);
    let deliveries = store
        .list_deliveries(&tenant("acme"), &DeliveryFilter::default(), 10)
        .await
        .unwrap();
    let mut endpoints: Vec<&str> = deliveries.iter().map(|d| d.endpoint_id.as_str()).collect();
    endpoints.sort_unstable();
    assert_eq!(endpoints, ["e1", "e2"]);
    assert!(deliveries.iter().all(|d| d.event_id == events[0].id
        && d.status() == DeliveryStatus::Pending
        && d.kind == EventKind::TaskInputRequired));
    assert!(
        store
            .events_after(&tenant("other"), 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_deliveries(&tenant("other"), &DeliveryFilter::default(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    // A heartbeat changes the task but is no event.
    queue
        .update(
            &tenant("acme"),
            &task.id,
            Transition::Decide {
                approved: true,
                decided_by: "ops".into(),
                comment: String::new(),
            },
            SystemTime::now(),
        )
        .await
        .unwrap();
    let events = store.events_after(&tenant("acme"), 0, 10).await.unwrap();
    assert_eq!(
        events.iter().map(|e| e.kind).collect::<Vec<_>>(),
        [EventKind::TaskInputRequired, EventKind::TaskApproved]
    );
    assert!(events[1].sequence > events[0].sequence);
}

pub async fn a_refused_transition_writes_no_event(queue: Queue, store: Store) {
    store
        .create_endpoint(&endpoint("acme", "e1", 1))
        .await
        .unwrap();
    let task = running_task(&queue, "acme").await;
    let refused = queue
        .update(
            &tenant("acme"),
            &task.id,
            Transition::Decide {
                approved: true,
                decided_by: "ops".into(),
                comment: String::new(),
            },
            SystemTime::now(),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code_and_reason().0, ErrorCode::FailedPrecondition);
    assert!(
        store
            .events_after(&tenant("acme"), 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_deliveries(&tenant("acme"), &DeliveryFilter::default(), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn the_reaper_writes_a_dead_event_for_each_task_it_buries(queue: Queue, store: Store) {
    store
        .create_endpoint(&endpoint("acme", "e1", 1))
        .await
        .unwrap();
    let task = running_task(&queue, "acme").await;
    let later = SystemTime::now() + Duration::from_secs(3600);
    assert_eq!(queue.reap_exhausted(later, 10).await.unwrap(), 1);
    let events = store.events_after(&tenant("acme"), 0, 10).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, EventKind::TaskDead);
    assert_eq!(events[0].task_id.as_deref(), Some(task.id.as_str()));
    let deliveries = store
        .list_deliveries(&tenant("acme"), &DeliveryFilter::default(), 10)
        .await
        .unwrap();
    assert_eq!(deliveries.len(), 1);
}

pub async fn endpoints_are_listed_and_deleted_within_their_tenant_only(
    _queue: Queue,
    store: Store,
) {
    store
        .create_endpoint(&endpoint("acme", "e2", 2))
        .await
        .unwrap();
    store
        .create_endpoint(&endpoint("acme", "e1", 1))
        .await
        .unwrap();
    store
        .create_endpoint(&endpoint("other", "e3", 3))
        .await
        .unwrap();
    let taken = store
        .create_endpoint(&endpoint("acme", "e1", 4))
        .await
        .unwrap_err();
    assert_eq!(taken.code_and_reason().0, ErrorCode::AlreadyExists);
    let listed = store.list_endpoints(&tenant("acme")).await.unwrap();
    assert_eq!(
        listed,
        [endpoint("acme", "e1", 1), endpoint("acme", "e2", 2)]
    );
    assert!(!store.delete_endpoint(&tenant("acme"), "e3").await.unwrap());
    assert_eq!(
        store.list_endpoints(&tenant("other")).await.unwrap().len(),
        1
    );
    assert!(store.delete_endpoint(&tenant("acme"), "e1").await.unwrap());
    assert!(!store.delete_endpoint(&tenant("acme"), "e1").await.unwrap());
    assert_eq!(
        store.list_endpoints(&tenant("acme")).await.unwrap(),
        [endpoint("acme", "e2", 2)]
    );
}

pub(crate) fn finding() -> CorruptFinding {
    CorruptFinding {
        run_id: RunId::parse("run-1").unwrap(),
        found_by: "validate",
        step: Some(3),
        call_id: None,
        detail: "checksum mismatch".into(),
    }
}

pub async fn a_taken_delivery_is_leased_then_settled_as_delivered_failing_or_given_up(
    _queue: Queue,
    store: Store,
) {
    store
        .create_endpoint(&endpoint("acme", "e1", 1))
        .await
        .unwrap();
    store
        .create_endpoint(&endpoint("acme", "e2", 2))
        .await
        .unwrap();
    store
        .create_endpoint(&endpoint("acme", "e3", 3))
        .await
        .unwrap();
    let now = whole_micros(SystemTime::now());
    let event = store
        .append_event(&corrupt_event(&tenant("acme"), &finding(), now))
        .await
        .unwrap();
    let lease = Duration::from_secs(60);
    let taken = store.take_due(now, lease, 10).await.unwrap();
    assert_eq!(taken.len(), 3);
    assert!(taken.iter().all(|due| due.event.id == event.id
        && due.event.payload == event.payload
        && due.endpoint.id == due.delivery.endpoint_id
        && due.endpoint.url.ends_with(&due.endpoint.id)));
    // Leased: not due again until the lease ends, then due again (its sender died).
    assert!(store.take_due(now, lease, 10).await.unwrap().is_empty());
    assert_eq!(
        store.take_due(now + lease, lease, 1).await.unwrap().len(),
        1
    );

    let retry_at = now + Duration::from_secs(5);
    assert!(
        store
            .settle(&event.id, "e1", &Settlement::Delivered, now)
            .await
            .unwrap()
    );
    assert!(
        store
            .settle(
                &event.id,
                "e2",
                &Settlement::RetryAt {
                    at: retry_at,
                    error: "HTTP 503".into()
                },
                now,
            )
            .await
            .unwrap()
    );
    assert!(
        store
            .settle(
                &event.id,
                "e3",
                &Settlement::GiveUp {
                    error: "HTTP 410".into()
                },
                now
            )
            .await
            .unwrap()
    );
    // A late duplicate outcome does not undo a delivery.
    assert!(
        store
            .settle(
                &event.id,
                "e1",
                &Settlement::GiveUp {
                    error: "late".into()
                },
                now
            )
            .await
            .unwrap()
    );
    assert!(
        !store
            .settle(&event.id, "gone", &Settlement::Delivered, now)
            .await
            .unwrap()
    );

    let status_of = |id: &str, all: &[checkpointd_core::notify::Delivery]| {
        let delivery = all.iter().find(|d| d.endpoint_id == id).unwrap().clone();
        (delivery.status(), delivery.attempts, delivery.last_error)
    };
    let all = store
        .list_deliveries(&tenant("acme"), &DeliveryFilter::default(), 10)
        .await
        .unwrap();
    assert_eq!(status_of("e1", &all), (DeliveryStatus::Delivered, 1, None));
    assert_eq!(
        status_of("e2", &all),
        (DeliveryStatus::Failing, 1, Some("HTTP 503".to_owned()))
    );
    assert_eq!(
        status_of("e3", &all),
        (DeliveryStatus::GivenUp, 1, Some("HTTP 410".to_owned()))
    );
    let failing = store
        .list_deliveries(
            &tenant("acme"),
            &DeliveryFilter {
                endpoint_id: None,
                status: Some(DeliveryStatus::Failing),
            },
            10,
        )
        .await
        .unwrap();
    assert_eq!(failing.len(), 1);
    let mut depth = store.delivery_depth().await.unwrap();
    depth.sort_by_key(|(status, _)| status.as_str());
    assert_eq!(
        depth,
        [
            (DeliveryStatus::Delivered, 1),
            (DeliveryStatus::Failing, 1),
            (DeliveryStatus::GivenUp, 1)
        ]
    );
    // The retry is due at its time, and only the failing one.
    assert!(
        store
            .take_due(retry_at - Duration::from_micros(1), lease, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let again = store.take_due(retry_at, lease, 10).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].delivery.endpoint_id, "e2");
    assert_eq!(again[0].delivery.attempts, 1);
    // Deleting the endpoint drops its deliveries.
    assert!(store.delete_endpoint(&tenant("acme"), "e2").await.unwrap());
    assert!(
        !store
            .settle(&event.id, "e2", &Settlement::Delivered, now)
            .await
            .unwrap()
    );
}

pub async fn an_appended_event_reaches_the_endpoints_and_the_watch_in_order(
    queue: Queue,
    store: Store,
) {
    let now = SystemTime::now();
    let first = store
        .append_event(&corrupt_event(&tenant("acme"), &finding(), now))
        .await
        .unwrap();
    store
        .create_endpoint(&endpoint("acme", "e1", 1))
        .await
        .unwrap();
    let _ = store
        .append_event(&corrupt_event(&tenant("other"), &finding(), now))
        .await
        .unwrap();
    let task = running_task(&queue, "acme").await;
    queue
        .update(
            &tenant("acme"),
            &task.id,
            Transition::Fail {
                attempt: task.attempt,
                error: "boom".into(),
                class: crate::queue::ErrorClass::Fatal,
            },
            SystemTime::now(),
        )
        .await
        .unwrap();
    let second = store
        .append_event(&corrupt_event(&tenant("acme"), &finding(), now))
        .await
        .unwrap();
    let events = store.events_after(&tenant("acme"), 0, 10).await.unwrap();
    assert_eq!(
        events.len(),
        2,
        "a fatal failure is final, not dead: no event"
    );
    assert_eq!(events[0], first);
    assert_eq!(events[1], second);
    assert_eq!(first.created_at, whole_micros(now));
    assert_eq!(
        store
            .events_after(&tenant("acme"), first.sequence, 10)
            .await
            .unwrap(),
        std::slice::from_ref(&second)
    );
    assert_eq!(
        store.events_after(&tenant("acme"), 0, 1).await.unwrap(),
        std::slice::from_ref(&first)
    );
    // Only the event after the endpoint existed is delivered to it.
    let deliveries = store
        .list_deliveries(&tenant("acme"), &DeliveryFilter::default(), 10)
        .await
        .unwrap();
    assert_eq!(deliveries.len(), 1);
    assert_eq!(deliveries[0].event_id, second.id);
}
