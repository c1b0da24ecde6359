-- checkpointd schema v9 for Postgres: notifications (docs/notifications.md).
--
-- `notification_events` is the outbox: a task transition that raises an event writes it here,
-- with one `webhook_deliveries` row per endpoint its tenant has, in the transition's own
-- transaction. `seq` orders the outbox for the watch stream. An endpoint keeps no secret, only
-- the salt its signing key is derived from with the server's notification key.
CREATE TABLE webhook_endpoints (
    tenant      text COLLATE "C" NOT NULL,
    id          text COLLATE "C" NOT NULL,
    url         text        NOT NULL,
    description text        NOT NULL,
    salt        bytea       NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);

CREATE TABLE notification_events (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant     text COLLATE "C" NOT NULL,
    id         text COLLATE "C" NOT NULL UNIQUE,
    type       text        NOT NULL,
    task_id    text,
    run_id     text,
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX notification_events_by_tenant ON notification_events (tenant, seq);

CREATE TABLE webhook_deliveries (
    tenant          text COLLATE "C" NOT NULL,
    event_id        text COLLATE "C" NOT NULL,
    endpoint_id     text COLLATE "C" NOT NULL,
    type            text        NOT NULL,
    state           text        NOT NULL,
    attempts        integer     NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    last_error      text,
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (event_id, endpoint_id)
);
-- The sender's scan: pending deliveries by due time.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_tenant ON webhook_deliveries (tenant, event_id);
