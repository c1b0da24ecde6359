//! Schema version 11 (keys that lead with `tenant`) keeps the outbox a version 10 database
//! holds: its events and deliveries are still there, and still delivered, after connect.

use std::time::{Duration, SystemTime};

use crate::testing::TestSchema;
use checkpointd_storage::notifications::NotificationStore;

/// Version 10's outbox keys and collations, put back on a migrated schema.
const BACK_TO_VERSION_10: &str = "
    ALTER TABLE notification_events
        DROP CONSTRAINT notification_events_pkey,
        DROP CONSTRAINT notification_events_tenant_id_key,
        ADD PRIMARY KEY (seq), ADD UNIQUE (id);
    ALTER TABLE webhook_deliveries
        DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (event_id, endpoint_id);
    ALTER TABLE webhook_endpoints ALTER COLUMN tenant TYPE text COLLATE \"C\";
    ALTER TABLE notification_events ALTER COLUMN tenant TYPE text COLLATE \"C\";
    ALTER TABLE webhook_deliveries ALTER COLUMN tenant TYPE text COLLATE \"C\";
    CREATE INDEX notification_events_by_tenant ON notification_events (tenant, seq);
    CREATE INDEX webhook_deliveries_by_tenant ON webhook_deliveries (tenant, event_id);
    DELETE FROM checkpointd_migrations WHERE version = 11;";

const OUTBOX_ROWS: &str = "
    INSERT INTO webhook_endpoints (tenant, id, url, description, salt, created_at)
        VALUES ('acme', 'e1', 'https://example.test/hook', '', '\\x00', now());
    INSERT INTO notification_events (tenant, id, type, task_id, run_id, payload, created_at)
        VALUES ('acme', 'ev-1', 'task.dead', 't1', 'r1', '\\x7b7d', now());
    INSERT INTO webhook_deliveries (tenant, event_id, endpoint_id, type, state, attempts,
                                    next_attempt_at, created_at)
        VALUES ('acme', 'ev-1', 'e1', 'task.dead', 'pending', 0, now() - interval '1 minute',
                now());";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_10_outbox_keeps_its_rows_under_the_tenant_keys() {
    let schema = TestSchema::create().await;
    schema.store().await;
    schema.sql(BACK_TO_VERSION_10).await;
    schema.sql(OUTBOX_ROWS).await;

    let store = schema.store().await;
    assert_eq!(
        store.placement_violations().await.unwrap(),
        Vec::<String>::new()
    );
    let taken = store
        .take_due(SystemTime::now(), Duration::from_secs(30), 10)
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(taken[0].event.id, "ev-1");
    assert_eq!(taken[0].endpoint.url, "https://example.test/hook");
    assert_eq!(taken[0].delivery.tenant.as_str(), "acme");
}
