-- checkpointd schema v11 for Postgres: every primary and unique key of a tenant's table leads
-- with `tenant`, so the tables can be distributed by tenant on Citus (docs/deploy.md), where a
-- unique key must include the distribution column; and the outbox's `tenant` columns take the
-- database's default collation, like every other table's, because Citus colocates tables only
-- when their distribution columns have the same type and collation.
--
-- Rows are kept: the new keys are wider than the old ones, so rows unique before stay unique.
-- Changing only a column's collation rebuilds its indexes without rewriting the table.
ALTER TABLE webhook_endpoints ALTER COLUMN tenant TYPE text COLLATE "default";
ALTER TABLE notification_events ALTER COLUMN tenant TYPE text COLLATE "default";
ALTER TABLE webhook_deliveries ALTER COLUMN tenant TYPE text COLLATE "default";

-- The outbox: its order (`seq`, from the identity) within a tenant, and an event id unique
-- within its tenant. The watch stream reads `WHERE tenant = $1 AND seq > $2`, which the new
-- primary key answers, so its former index goes.
--
-- One subcommand per ALTER TABLE: Citus refuses an ADD CONSTRAINT among other subcommands.
ALTER TABLE notification_events DROP CONSTRAINT notification_events_pkey;
ALTER TABLE notification_events DROP CONSTRAINT notification_events_id_key;
ALTER TABLE notification_events
    ADD CONSTRAINT notification_events_pkey PRIMARY KEY (tenant, seq);
ALTER TABLE notification_events
    ADD CONSTRAINT notification_events_tenant_id_key UNIQUE (tenant, id);
DROP INDEX notification_events_by_tenant;

-- One delivery per event and endpoint of a tenant; the former (tenant, event_id) index is now
-- the primary key's prefix.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey;
ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (tenant, event_id, endpoint_id);
DROP INDEX webhook_deliveries_by_tenant;
