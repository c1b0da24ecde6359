-- checkpointd SQLite schema, version 9: notifications (docs/notifications.md).
--
-- `notification_events` is the outbox: a task transition that raises an event writes it here,
-- with one `webhook_deliveries` row per endpoint its tenant has, in the transition's own
-- transaction. `seq` orders the outbox for the watch stream. An endpoint keeps no secret, only
-- the salt its signing key is derived from with the server's notification key. Times are unix
-- microseconds.
CREATE TABLE webhook_endpoints (
    tenant      TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    url         TEXT    NOT NULL,
    description TEXT    NOT NULL,
    salt        BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant, id)
);

CREATE TABLE notification_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT    NOT NULL,
    id         TEXT    NOT NULL UNIQUE,
    type       TEXT    NOT NULL,
    task_id    TEXT,
    run_id     TEXT,
    payload    BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX notification_events_by_tenant ON notification_events (tenant, seq);

CREATE TABLE webhook_deliveries (
    tenant          TEXT    NOT NULL,
    event_id        TEXT    NOT NULL,
    endpoint_id     TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT,
    delivered_at    INTEGER,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (event_id, endpoint_id)
);
-- The sender's scan: pending deliveries by due time.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_tenant ON webhook_deliveries (tenant, event_id);
