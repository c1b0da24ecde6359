//! Webhook endpoints, the outbox and deliveries in the Postgres database, on the store's pool.
//! [`record_event`] is how the queue writes a transition's event inside the transition's own
//! transaction.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use crate::PostgresStore;
use crate::error::db;
use crate::statements::{Conn, Statements};
use crate::tenant_scans;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::{Error, Result};
use checkpointd_core::time::whole_micros;
use checkpointd_storage::notifications::{
    DELIVERY_COLUMNS, Delivery, DeliveryFilter, DeliveryState, DeliveryStatus, DueDelivery,
    ENDPOINT_COLUMNS, EVENT_COLUMNS, Event, EventKind, NotificationStore, OutboxPruned,
    SettledColumns, Settlement, WebhookEndpoint, status_condition,
};

/// Writes `event` and one pending delivery per endpoint its tenant has, in one statement on
/// `client` (the transition's transaction); returns the event with its sequence.
pub(crate) async fn record_event<C: Conn>(
    statements: &Statements,
    client: &C,
    event: &Event,
) -> Result<Event> {
    let statement = statements
        .prepare(
            client,
            "WITH event AS (
                 INSERT INTO notification_events (tenant, id, type, task_id, run_id, payload,
                                                  created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq),
             deliveries AS (
                 INSERT INTO webhook_deliveries (tenant, event_id, endpoint_id, type, state,
                                                 attempts, next_attempt_at, created_at)
                 SELECT tenant, $2, id, $3, 'pending', 0, $7, $7
                   FROM webhook_endpoints WHERE tenant = $1)
             SELECT seq FROM event",
        )
        .await
        .map_err(db)?;
    let created_at = whole_micros(event.created_at);
    let row = statement
        .query_one(
            client,
            &[
                &event.tenant.as_str(),
                &event.id,
                &event.kind.as_str(),
                &event.task_id,
                &event.run_id,
                &event.payload,
                &created_at,
            ],
        )
        .await
        .map_err(db)?;
    let mut stored = event.clone();
    stored.sequence = u64::try_from(row.try_get::<_, i64>("seq").map_err(db)?).unwrap_or(0);
    Ok(stored)
}

fn tenant(row: &Row) -> Result<Tenant> {
    Tenant::parse(row.try_get::<_, &str>("tenant").map_err(db)?)
}

fn endpoint(row: &Row, created_at: &str) -> Result<WebhookEndpoint> {
    Ok(WebhookEndpoint {
        tenant: tenant(row)?,
        id: row
            .try_get(if created_at == "created_at" {
                "id"
            } else {
                "endpoint_id"
            })
            .map_err(db)?,
        url: row.try_get("url").map_err(db)?,
        description: row.try_get("description").map_err(db)?,
        salt: row.try_get("salt").map_err(db)?,
        created_at: row.try_get(created_at).map_err(db)?,
    })
}

fn event(row: &Row, id: &str, created_at: &str) -> Result<Event> {
    Ok(Event {
        sequence: u64::try_from(row.try_get::<_, i64>("seq").map_err(db)?).unwrap_or(0),
        tenant: tenant(row)?,
        id: row.try_get(id).map_err(db)?,
        kind: EventKind::parse(row.try_get("type").map_err(db)?)?,
        task_id: row.try_get("task_id").map_err(db)?,
        run_id: row.try_get("run_id").map_err(db)?,
        payload: row.try_get("payload").map_err(db)?,
        created_at: row.try_get(created_at).map_err(db)?,
    })
}

fn delivery(row: &Row) -> Result<Delivery> {
    Ok(Delivery {
        tenant: tenant(row)?,
        event_id: row.try_get("event_id").map_err(db)?,
        endpoint_id: row.try_get("endpoint_id").map_err(db)?,
        kind: EventKind::parse(row.try_get("type").map_err(db)?)?,
        state: DeliveryState::parse(row.try_get("state").map_err(db)?)?,
        attempts: u32::try_from(row.try_get::<_, i32>("attempts").map_err(db)?).unwrap_or(0),
        next_attempt_at: row.try_get("next_attempt_at").map_err(db)?,
        last_error: row.try_get("last_error").map_err(db)?,
        delivered_at: row.try_get("delivered_at").map_err(db)?,
        created_at: row.try_get("created_at").map_err(db)?,
    })
}

fn limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

#[async_trait]
impl NotificationStore for PostgresStore {
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<()> {
        let client = self.client().await?;
        let inserted = self
            .statements
            .execute(
                &client,
                "INSERT INTO webhook_endpoints (tenant, id, url, description, salt, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                &[
                    &endpoint.tenant.as_str(),
                    &endpoint.id,
                    &endpoint.url,
                    &endpoint.description,
                    &endpoint.salt,
                    &whole_micros(endpoint.created_at),
                ],
            )
            .await
            .map_err(db)?;
        if inserted == 0 {
            return Err(Error::Conflict(format!(
                "webhook endpoint {} exists",
                endpoint.id
            )));
        }
        Ok(())
    }

    async fn list_endpoints(&self, tenant: &Tenant) -> Result<Vec<WebhookEndpoint>> {
        let client = self.client().await?;
        self.statements
            .query(
                &client,
                &format!(
                    "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant = $1 \
                     ORDER BY created_at, id"
                ),
                &[&tenant.as_str()],
            )
            .await
            .map_err(db)?
            .iter()
            .map(|row| endpoint(row, "created_at"))
            .collect()
    }

    async fn delete_endpoint(&self, tenant: &Tenant, id: &str) -> Result<bool> {
        let client = self.client().await?;
        // One statement, so the endpoint and its deliveries go together.
        let row = self
            .statements
            .query_one(
                &client,
                "WITH gone AS (DELETE FROM webhook_endpoints WHERE tenant = $1 AND id = $2
                                RETURNING id),
                      undelivered AS (DELETE FROM webhook_deliveries
                                       WHERE tenant = $1 AND endpoint_id = $2)
                 SELECT count(*) AS deleted FROM gone",
                &[&tenant.as_str(), &id],
            )
            .await
            .map_err(db)?;
        Ok(row.try_get::<_, i64>("deleted").map_err(db)? > 0)
    }

    async fn append_event(&self, event: &Event) -> Result<Event> {
        let client = self.client().await?;
        record_event(&self.statements, &client, event).await
    }

    async fn take_due(
        &self,
        now: SystemTime,
        lease: Duration,
        batch: usize,
    ) -> Result<Vec<DueDelivery>> {
        let client = self.client().await?;
        // Picked over every tenant without locks, then taken one tenant at a time
        // (`tenant_scans`): concurrent senders skip each other's rows, and the lease is set as
        // they are taken.
        let (now, until) = (whole_micros(now), whole_micros(now + lease));
        let picked = self
            .statements
            .query(
                &client,
                tenant_scans::DUE_DELIVERIES,
                &[&now, &limit(batch)],
            )
            .await
            .map_err(db)?
            .iter()
            .map(|row| {
                let tenant = tenant(row)?;
                let event_id: String = row.try_get("event_id").map_err(db)?;
                let endpoint_id: String = row.try_get("endpoint_id").map_err(db)?;
                Ok((tenant, (event_id, endpoint_id)))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut rows = Vec::new();
        for (tenant, keys) in tenant_scans::group_by_tenant(picked) {
            let (events, endpoints): (Vec<String>, Vec<String>) = keys.into_iter().unzip();
            rows.extend(
                self.statements
                    .query(
                        &client,
                        tenant_scans::TAKE_DUE,
                        &[&now, &until, &tenant.as_str(), &events, &endpoints],
                    )
                    .await
                    .map_err(db)?,
            );
        }
        rows.iter()
            .map(|row| {
                Ok(DueDelivery {
                    delivery: delivery(row)?,
                    endpoint: endpoint(row, "endpoint_created_at")?,
                    event: event(row, "event_id", "event_created_at")?,
                })
            })
            .collect()
    }

    async fn settle(
        &self,
        event_id: &str,
        endpoint_id: &str,
        outcome: &Settlement,
        now: SystemTime,
    ) -> Result<bool> {
        let client = self.client().await?;
        let settled = SettledColumns::of(outcome, now);
        let (state, next_at, error, delivered_at) = (
            settled.state.as_str(),
            settled.next_attempt_at.map(whole_micros),
            settled.last_error,
            settled.delivered_at.map(whole_micros),
        );
        // A settled delivery stays as it is; one that is gone answers no row.
        let row = self
            .statements
            .query_one(
                &client,
                "WITH settled AS (
                     UPDATE webhook_deliveries SET attempts = attempts + 1, state = $3,
                            next_attempt_at = coalesce($4, next_attempt_at), last_error = $5,
                            delivered_at = $6
                      WHERE event_id = $1 AND endpoint_id = $2 AND state = 'pending')
                 SELECT count(*) AS found FROM webhook_deliveries
                  WHERE event_id = $1 AND endpoint_id = $2",
                &[
                    &event_id,
                    &endpoint_id,
                    &state,
                    &next_at,
                    &error,
                    &delivered_at,
                ],
            )
            .await
            .map_err(db)?;
        Ok(row.try_get::<_, i64>("found").map_err(db)? > 0)
    }

    async fn list_deliveries(
        &self,
        tenant: &Tenant,
        filter: &DeliveryFilter,
        batch: usize,
    ) -> Result<Vec<Delivery>> {
        let client = self.client().await?;
        let status = filter.status.map_or("true", status_condition);
        self.statements
            .query(
                &client,
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries
                      WHERE tenant = $1 AND ($2::text IS NULL OR endpoint_id = $2) AND {status}
                      ORDER BY event_id DESC, endpoint_id DESC LIMIT $3"
                ),
                &[&tenant.as_str(), &filter.endpoint_id, &limit(batch)],
            )
            .await
            .map_err(db)?
            .iter()
            .map(delivery)
            .collect()
    }

    async fn events_after(&self, tenant: &Tenant, after: u64, batch: usize) -> Result<Vec<Event>> {
        let client = self.client().await?;
        self.statements
            .query(
                &client,
                &format!(
                    "SELECT {EVENT_COLUMNS} FROM notification_events
                      WHERE tenant = $1 AND seq > $2 ORDER BY seq LIMIT $3"
                ),
                &[
                    &tenant.as_str(),
                    &i64::try_from(after).unwrap_or(i64::MAX),
                    &limit(batch),
                ],
            )
            .await
            .map_err(db)?
            .iter()
            .map(|row| event(row, "id", "created_at"))
            .collect()
    }

    async fn delivery_depth(&self) -> Result<Vec<(DeliveryStatus, u64)>> {
        let client = self.client().await?;
        let row = self
            .statements
            .query_one(
                &client,
                "SELECT count(*) FILTER (WHERE state = 'pending' AND attempts = 0) AS pending,
                        count(*) FILTER (WHERE state = 'pending' AND attempts > 0) AS failing,
                        count(*) FILTER (WHERE state = 'delivered') AS delivered,
                        count(*) FILTER (WHERE state = 'given_up') AS given_up
                   FROM webhook_deliveries",
                &[],
            )
            .await
            .map_err(db)?;
        let mut depth = Vec::new();
        for status in DeliveryStatus::ALL {
            let count: i64 = row.try_get(status.as_str()).map_err(db)?;
            if count > 0 {
                depth.push((status, count as u64));
            }
        }
        Ok(depth)
    }

    async fn prune_outbox(&self, before: SystemTime) -> Result<OutboxPruned> {
        let before = whole_micros(before);
        let mut client = self.client().await?;
        // Two statements, not one: a statement's CTEs share one snapshot, so the events'
        // NOT EXISTS would still see the deliveries deleted beside it.
        let tx = client.transaction().await.map_err(db)?;
        let deliveries = self
            .statements
            .execute(
                &tx,
                "DELETE FROM webhook_deliveries
                  WHERE state IN ('delivered', 'given_up') AND created_at < $1",
                &[&before],
            )
            .await
            .map_err(db)?;
        let events = self
            .statements
            .execute(
                &tx,
                "DELETE FROM notification_events ev WHERE created_at < $1 AND NOT EXISTS
                   (SELECT 1 FROM webhook_deliveries d
                     WHERE d.tenant = ev.tenant AND d.event_id = ev.id)",
                &[&before],
            )
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(OutboxPruned { deliveries, events })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use checkpointd_storage::notifications::NotificationStore;
    use checkpointd_storage::queue::TaskQueue;

    use crate::PostgresQueue;
    use crate::testing::TestSchema;

    checkpointd_storage::notification_behaviours!(postgres, async {
        let schema = TestSchema::create().await;
        let store = Arc::new(schema.store().await);
        let queue = Arc::new(PostgresQueue::new(store.clone()));
        (
            queue as Arc<dyn TaskQueue>,
            store as Arc<dyn NotificationStore>,
            schema,
        )
    });
    checkpointd_storage::notification_behaviours!(postgres_behind_a_transaction_pooler, async {
        let schema = TestSchema::behind_transaction_pooler().await;
        let store = Arc::new(schema.store().await);
        let queue = Arc::new(PostgresQueue::new(store.clone()));
        (
            queue as Arc<dyn TaskQueue>,
            store as Arc<dyn NotificationStore>,
            schema,
        )
    });
    checkpointd_storage::outbox_behaviours!(postgres_outbox, async {
        let schema = TestSchema::create().await;
        let store = Arc::new(schema.store().await);
        (
            store.clone() as Arc<dyn checkpointd_storage::store::CheckpointStore>,
            store as Arc<dyn NotificationStore>,
            schema,
        )
    });
    checkpointd_storage::outbox_behaviours!(postgres_outbox_behind_a_transaction_pooler, async {
        let schema = TestSchema::behind_transaction_pooler().await;
        let store = Arc::new(schema.store().await);
        (
            store.clone() as Arc<dyn checkpointd_storage::store::CheckpointStore>,
            store as Arc<dyn NotificationStore>,
            schema,
        )
    });
}
