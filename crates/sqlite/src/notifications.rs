//! Webhook endpoints, the outbox and deliveries in the SQLite database, on the store's
//! connections. [`record_event`] is how the queue writes a transition's event inside the
//! transition's own transaction.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use rusqlite::{Connection, Row, Transaction, TransactionBehavior, named_params, params};

use crate::SqliteStore;
use crate::codec::{from_micros, to_micros};
use crate::error::DbResultExt;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::{Error, Result};
use checkpointd_storage::notifications::{
    DELIVERY_COLUMNS, Delivery, DeliveryFilter, DeliveryState, DeliveryStatus, DueDelivery,
    ENDPOINT_COLUMNS, EVENT_COLUMNS, Event, EventKind, NotificationStore, OutboxPruned,
    SettledColumns, Settlement, WebhookEndpoint, status_condition,
};

/// Writes `event` and one pending delivery per endpoint its tenant has, in `tx`; returns the
/// event with its sequence.
pub(crate) fn record_event(tx: &Transaction<'_>, event: &Event) -> Result<Event> {
    let created_at = to_micros(event.created_at);
    let sequence: i64 = tx
        .prepare_cached(
            "INSERT INTO notification_events (tenant, id, type, task_id, run_id, payload, \
             created_at) VALUES (:tenant, :id, :type, :task_id, :run_id, :payload, :created_at) \
             RETURNING seq",
        )
        .db()?
        .query_row(
            named_params! {
                ":tenant": event.tenant.as_str(),
                ":id": event.id,
                ":type": event.kind.as_str(),
                ":task_id": event.task_id,
                ":run_id": event.run_id,
                ":payload": event.payload,
                ":created_at": created_at,
            },
            |row| row.get(0),
        )
        .db()?;
    tx.prepare_cached(
        "INSERT INTO webhook_deliveries (tenant, event_id, endpoint_id, type, state, attempts, \
         next_attempt_at, created_at) \
         SELECT tenant, :event_id, id, :type, 'pending', 0, :now, :now \
           FROM webhook_endpoints WHERE tenant = :tenant",
    )
    .db()?
    .execute(named_params! {
        ":tenant": event.tenant.as_str(),
        ":event_id": event.id,
        ":type": event.kind.as_str(),
        ":now": created_at,
    })
    .db()?;
    let mut stored = event.clone();
    stored.sequence = u64::try_from(sequence).unwrap_or(0);
    Ok(stored)
}

fn tenant_of(raw: String) -> rusqlite::Result<Tenant> {
    Tenant::parse(&raw).map_err(|error| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(error))
    })
}

fn kind_of(raw: String) -> rusqlite::Result<EventKind> {
    EventKind::parse(&raw).map_err(|error| {
        rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, Box::new(error))
    })
}

fn endpoint(row: &Row<'_>) -> rusqlite::Result<WebhookEndpoint> {
    Ok(WebhookEndpoint {
        tenant: tenant_of(row.get("tenant")?)?,
        id: row.get("id")?,
        url: row.get("url")?,
        description: row.get("description")?,
        salt: row.get("salt")?,
        created_at: from_micros(row.get("created_at")?),
    })
}

fn event(row: &Row<'_>) -> rusqlite::Result<Event> {
    Ok(Event {
        sequence: u64::try_from(row.get::<_, i64>("seq")?).unwrap_or(0),
        tenant: tenant_of(row.get("tenant")?)?,
        id: row.get("id")?,
        kind: kind_of(row.get("type")?)?,
        task_id: row.get("task_id")?,
        run_id: row.get("run_id")?,
        payload: row.get("payload")?,
        created_at: from_micros(row.get("created_at")?),
    })
}

fn delivery(row: &Row<'_>) -> rusqlite::Result<Delivery> {
    let state: String = row.get("state")?;
    Ok(Delivery {
        tenant: tenant_of(row.get("tenant")?)?,
        event_id: row.get("event_id")?,
        endpoint_id: row.get("endpoint_id")?,
        kind: kind_of(row.get("type")?)?,
        state: DeliveryState::parse(&state).map_err(|error| {
            rusqlite::Error::FromSqlConversionFailure(
                4,
                rusqlite::types::Type::Text,
                Box::new(error),
            )
        })?,
        attempts: u32::try_from(row.get::<_, i64>("attempts")?).unwrap_or(u32::MAX),
        next_attempt_at: from_micros(row.get("next_attempt_at")?),
        last_error: row.get("last_error")?,
        delivered_at: row.get::<_, Option<i64>>("delivered_at")?.map(from_micros),
        created_at: from_micros(row.get("created_at")?),
    })
}

fn begin(conn: &mut Connection) -> Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .db()
}

#[async_trait]
impl NotificationStore for SqliteStore {
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<()> {
        let endpoint = endpoint.clone();
        self.write(move |conn| {
            let inserted = conn
                .execute(
                    "INSERT INTO webhook_endpoints (tenant, id, url, description, salt, \
                     created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
                    params![
                        endpoint.tenant.as_str(),
                        endpoint.id,
                        endpoint.url,
                        endpoint.description,
                        endpoint.salt,
                        to_micros(endpoint.created_at),
                    ],
                )
                .db()?;
            if inserted == 0 {
                return Err(Error::Conflict(format!(
                    "webhook endpoint {} exists",
                    endpoint.id
                )));
            }
            Ok(())
        })
        .await
    }

    async fn list_endpoints(&self, tenant: &Tenant) -> Result<Vec<WebhookEndpoint>> {
        let tenant = tenant.clone();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant = ?1 \
                 ORDER BY created_at, id"
            ))
            .db()?
            .query_map([tenant.as_str()], endpoint)
            .db()?
            .collect::<rusqlite::Result<Vec<_>>>()
            .db()
        })
        .await
    }

    async fn delete_endpoint(&self, tenant: &Tenant, id: &str) -> Result<bool> {
        let (tenant, id) = (tenant.clone(), id.to_owned());
        self.write(move |conn| {
            let tx = begin(conn)?;
            let deleted = tx
                .execute(
                    "DELETE FROM webhook_endpoints WHERE tenant = ?1 AND id = ?2",
                    params![tenant.as_str(), id],
                )
                .db()?;
            tx.execute(
                "DELETE FROM webhook_deliveries WHERE tenant = ?1 AND endpoint_id = ?2",
                params![tenant.as_str(), id],
            )
            .db()?;
            tx.commit().db()?;
            Ok(deleted > 0)
        })
        .await
    }

    async fn append_event(&self, event: &Event) -> Result<Event> {
        let event = event.clone();
        self.write(move |conn| {
            let tx = begin(conn)?;
            let stored = record_event(&tx, &event)?;
            tx.commit().db()?;
            Ok(stored)
        })
        .await
    }

    async fn take_due(
        &self,
        now: SystemTime,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<DueDelivery>> {
        self.write(move |conn| {
            let tx = begin(conn)?;
            let deliveries = tx
                .prepare_cached(&format!(
                    "UPDATE webhook_deliveries SET next_attempt_at = :leased
                      WHERE (event_id, endpoint_id) IN (
                            SELECT event_id, endpoint_id FROM webhook_deliveries
                             WHERE state = 'pending' AND next_attempt_at <= :now
                             ORDER BY next_attempt_at LIMIT :limit)
                      RETURNING {DELIVERY_COLUMNS}"
                ))
                .db()?
                .query_map(
                    named_params! {
                        ":now": to_micros(now),
                        ":leased": to_micros(now + lease),
                        ":limit": i64::try_from(limit).unwrap_or(i64::MAX),
                    },
                    delivery,
                )
                .db()?
                .collect::<rusqlite::Result<Vec<Delivery>>>()
                .db()?;
            let mut taken = Vec::with_capacity(deliveries.len());
            for delivery in deliveries {
                let endpoint = tx
                    .prepare_cached(&format!(
                        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints \
                         WHERE tenant = ?1 AND id = ?2"
                    ))
                    .db()?
                    .query_row(
                        params![delivery.tenant.as_str(), delivery.endpoint_id],
                        endpoint,
                    )
                    .db()?;
                let event = tx
                    .prepare_cached(&format!(
                        "SELECT {EVENT_COLUMNS} FROM notification_events WHERE id = ?1"
                    ))
                    .db()?
                    .query_row([&delivery.event_id], event)
                    .db()?;
                taken.push(DueDelivery {
                    delivery,
                    endpoint,
                    event,
                });
            }
            tx.commit().db()?;
            Ok(taken)
        })
        .await
    }

    async fn settle(
        &self,
        event_id: &str,
        endpoint_id: &str,
        outcome: &Settlement,
        now: SystemTime,
    ) -> Result<bool> {
        let (event_id, endpoint_id) = (event_id.to_owned(), endpoint_id.to_owned());
        let settled = SettledColumns::of(outcome, now);
        let (state, next_at, error, delivered_at) = (
            settled.state.as_str(),
            settled.next_attempt_at.map(to_micros),
            settled.last_error,
            settled.delivered_at.map(to_micros),
        );
        self.write(move |conn| {
            let tx = begin(conn)?;
            let exists: Option<String> = rusqlite::OptionalExtension::optional(tx.query_row(
                "SELECT state FROM webhook_deliveries WHERE event_id = ?1 AND endpoint_id = ?2",
                params![event_id, endpoint_id],
                |row| row.get(0),
            ))
            .db()?;
            let Some(current) = exists else {
                return Ok(false);
            };
            if current == "pending" {
                tx.execute(
                    "UPDATE webhook_deliveries SET attempts = attempts + 1, state = ?3, \
                     next_attempt_at = coalesce(?4, next_attempt_at), last_error = ?5, \
                     delivered_at = ?6 WHERE event_id = ?1 AND endpoint_id = ?2",
                    params![event_id, endpoint_id, state, next_at, error, delivered_at],
                )
                .db()?;
            }
            tx.commit().db()?;
            Ok(true)
        })
        .await
    }

    async fn list_deliveries(
        &self,
        tenant: &Tenant,
        filter: &DeliveryFilter,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        let (tenant, filter) = (tenant.clone(), filter.clone());
        self.read(move |conn| {
            let status = filter.status.map_or("1 = 1", status_condition);
            conn.prepare(&format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries
                  WHERE tenant = :tenant AND (:endpoint IS NULL OR endpoint_id = :endpoint)
                    AND {status}
                  ORDER BY event_id DESC, endpoint_id DESC LIMIT :limit"
            ))
            .db()?
            .query_map(
                named_params! {
                    ":tenant": tenant.as_str(),
                    ":endpoint": filter.endpoint_id,
                    ":limit": i64::try_from(limit).unwrap_or(i64::MAX),
                },
                delivery,
            )
            .db()?
            .collect::<rusqlite::Result<Vec<_>>>()
            .db()
        })
        .await
    }

    async fn events_after(&self, tenant: &Tenant, after: u64, limit: usize) -> Result<Vec<Event>> {
        let tenant = tenant.clone();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM notification_events
                  WHERE tenant = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
            ))
            .db()?
            .query_map(
                params![
                    tenant.as_str(),
                    i64::try_from(after).unwrap_or(i64::MAX),
                    i64::try_from(limit).unwrap_or(i64::MAX)
                ],
                event,
            )
            .db()?
            .collect::<rusqlite::Result<Vec<_>>>()
            .db()
        })
        .await
    }

    async fn delivery_depth(&self) -> Result<Vec<(DeliveryStatus, u64)>> {
        self.read(|conn| {
            let mut depth = Vec::new();
            for status in DeliveryStatus::ALL {
                let count: i64 = conn
                    .query_row(
                        &format!(
                            "SELECT count(*) FROM webhook_deliveries WHERE {}",
                            status_condition(status)
                        ),
                        [],
                        |row| row.get(0),
                    )
                    .db()?;
                if count > 0 {
                    depth.push((status, count as u64));
                }
            }
            Ok(depth)
        })
        .await
    }

    async fn prune_outbox(&self, before: SystemTime) -> Result<OutboxPruned> {
        let before = to_micros(before);
        self.write(move |conn| {
            let tx = begin(conn)?;
            let deliveries = tx
                .execute(
                    "DELETE FROM webhook_deliveries \
                      WHERE state IN ('delivered', 'given_up') AND created_at < ?1",
                    params![before],
                )
                .db()?;
            let events = tx
                .execute(
                    "DELETE FROM notification_events WHERE created_at < ?1 AND NOT EXISTS \
                     (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = notification_events.id)",
                    params![before],
                )
                .db()?;
            tx.commit().db()?;
            Ok(OutboxPruned {
                deliveries: deliveries as u64,
                events: events as u64,
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use checkpointd_storage::notifications::NotificationStore;
    use checkpointd_storage::queue::TaskQueue;

    use crate::{SqliteQueue, SqliteStore};

    checkpointd_storage::notification_behaviours!(sqlite, async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpointd.db").display().to_string();
        let store = Arc::new(SqliteStore::open(&path).await.unwrap());
        let queue = Arc::new(SqliteQueue::new(store.clone()));
        (
            queue as Arc<dyn TaskQueue>,
            store as Arc<dyn NotificationStore>,
            dir,
        )
    });
    checkpointd_storage::outbox_behaviours!(sqlite_outbox, async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpointd.db").display().to_string();
        let store = Arc::new(SqliteStore::open(&path).await.unwrap());
        (
            store.clone() as Arc<dyn checkpointd_storage::store::CheckpointStore>,
            store as Arc<dyn NotificationStore>,
            dir,
        )
    });
}
