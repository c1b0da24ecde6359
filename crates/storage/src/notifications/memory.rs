//! Endpoints, events and deliveries in process memory (`memory://`). The memory queue holds
//! one of these and records a transition's event under its own lock, as the SQL backends do
//! in the transition's transaction.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::{
    Delivery, DeliveryFilter, DeliveryState, DeliveryStatus, DueDelivery, Event, NotificationStore,
    OutboxPruned, SettledColumns, Settlement, WebhookEndpoint,
};
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::{Error, Result};

#[derive(Debug, Default)]
struct Outbox {
    /// By (tenant, id), oldest first within a tenant as ids are created in time order.
    endpoints: Vec<WebhookEndpoint>,
    events: BTreeMap<u64, Event>,
    /// By (event id, endpoint id).
    deliveries: BTreeMap<(String, String), Delivery>,
    last_sequence: u64,
}

impl Outbox {
    fn record(&mut self, event: &Event) -> Event {
        self.last_sequence += 1;
        let mut stored = event.clone();
        stored.sequence = self.last_sequence;
        for endpoint in self.endpoints.iter().filter(|e| e.tenant == event.tenant) {
            self.deliveries.insert(
                (event.id.clone(), endpoint.id.clone()),
                Delivery {
                    event_id: event.id.clone(),
                    endpoint_id: endpoint.id.clone(),
                    tenant: event.tenant.clone(),
                    kind: event.kind,
                    state: DeliveryState::Pending,
                    attempts: 0,
                    next_attempt_at: event.created_at,
                    last_error: None,
                    delivered_at: None,
                    created_at: event.created_at,
                },
            );
        }
        self.events.insert(stored.sequence, stored.clone());
        stored
    }
}

/// See the module documentation.
#[derive(Debug, Default)]
pub struct MemoryNotifications {
    outbox: Mutex<Outbox>,
}

impl MemoryNotifications {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Outbox) -> T) -> T {
        // Every change is a few inserts that cannot panic half-way.
        let mut outbox = self
            .outbox
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut outbox)
    }

    /// Records `event` with its deliveries; the memory queue calls this under its own lock.
    pub(crate) fn record(&self, event: &Event) -> Event {
        self.with(|outbox| outbox.record(event))
    }
}

#[async_trait]
impl NotificationStore for MemoryNotifications {
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<()> {
        self.with(|outbox| {
            if outbox
                .endpoints
                .iter()
                .any(|e| e.tenant == endpoint.tenant && e.id == endpoint.id)
            {
                return Err(Error::Conflict(format!(
                    "webhook endpoint {} exists",
                    endpoint.id
                )));
            }
            let mut stored = endpoint.clone();
            stored.created_at = checkpointd_core::time::whole_micros(endpoint.created_at);
            outbox.endpoints.push(stored);
            Ok(())
        })
    }

    async fn list_endpoints(&self, tenant: &Tenant) -> Result<Vec<WebhookEndpoint>> {
        self.with(|outbox| {
            let mut mine: Vec<WebhookEndpoint> = outbox
                .endpoints
                .iter()
                .filter(|e| &e.tenant == tenant)
                .cloned()
                .collect();
            mine.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            Ok(mine)
        })
    }

    async fn delete_endpoint(&self, tenant: &Tenant, id: &str) -> Result<bool> {
        self.with(|outbox| {
            let before = outbox.endpoints.len();
            outbox
                .endpoints
                .retain(|e| !(&e.tenant == tenant && e.id == id));
            if outbox.endpoints.len() == before {
                return Ok(false);
            }
            outbox
                .deliveries
                .retain(|_, d| !(&d.tenant == tenant && d.endpoint_id == id));
            Ok(true)
        })
    }

    async fn append_event(&self, event: &Event) -> Result<Event> {
        Ok(self.record(event))
    }

    async fn take_due(
        &self,
        now: SystemTime,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<DueDelivery>> {
        self.with(|outbox| {
            let mut due: Vec<&Delivery> = outbox
                .deliveries
                .values()
                .filter(|d| d.state == DeliveryState::Pending && d.next_attempt_at <= now)
                .collect();
            due.sort_by_key(|d| d.next_attempt_at);
            let keys: Vec<(String, String)> = due
                .iter()
                .take(limit)
                .map(|d| (d.event_id.clone(), d.endpoint_id.clone()))
                .collect();
            let mut taken = Vec::new();
            for key in keys {
                let delivery = outbox.deliveries.get_mut(&key).expect("chosen above");
                delivery.next_attempt_at = now + lease;
                let delivery = delivery.clone();
                let endpoint = outbox
                    .endpoints
                    .iter()
                    .find(|e| e.tenant == delivery.tenant && e.id == delivery.endpoint_id)
                    .cloned()
                    .ok_or_else(|| Error::internal("a delivery outlived its endpoint"))?;
                let event = outbox
                    .events
                    .values()
                    .find(|e| e.id == delivery.event_id)
                    .cloned()
                    .ok_or_else(|| Error::internal("a delivery outlived its event"))?;
                taken.push(DueDelivery {
                    delivery,
                    endpoint,
                    event,
                });
            }
            Ok(taken)
        })
    }

    async fn settle(
        &self,
        event_id: &str,
        endpoint_id: &str,
        outcome: &Settlement,
        now: SystemTime,
    ) -> Result<bool> {
        self.with(|outbox| {
            let Some(delivery) = outbox
                .deliveries
                .get_mut(&(event_id.to_owned(), endpoint_id.to_owned()))
            else {
                return Ok(false);
            };
            if delivery.state != DeliveryState::Pending {
                return Ok(true);
            }
            let settled = SettledColumns::of(outcome, now);
            delivery.attempts += 1;
            delivery.state = settled.state;
            delivery.next_attempt_at = settled.next_attempt_at.unwrap_or(delivery.next_attempt_at);
            delivery.last_error = settled.last_error;
            delivery.delivered_at = settled.delivered_at;
            Ok(true)
        })
    }

    async fn list_deliveries(
        &self,
        tenant: &Tenant,
        filter: &DeliveryFilter,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        self.with(|outbox| {
            let mut mine: Vec<Delivery> = outbox
                .deliveries
                .values()
                .filter(|d| {
                    &d.tenant == tenant
                        && filter
                            .endpoint_id
                            .as_ref()
                            .is_none_or(|id| &d.endpoint_id == id)
                        && filter.status.is_none_or(|status| d.status() == status)
                })
                .cloned()
                .collect();
            // Newest first: event ids are time-ordered.
            mine.sort_by(|a, b| (&b.event_id, &b.endpoint_id).cmp(&(&a.event_id, &a.endpoint_id)));
            mine.truncate(limit);
            Ok(mine)
        })
    }

    async fn events_after(&self, tenant: &Tenant, after: u64, limit: usize) -> Result<Vec<Event>> {
        self.with(|outbox| {
            Ok(outbox
                .events
                .range(after.saturating_add(1)..)
                .map(|(_, event)| event)
                .filter(|event| &event.tenant == tenant)
                .take(limit)
                .cloned()
                .collect())
        })
    }

    async fn delivery_depth(&self) -> Result<Vec<(DeliveryStatus, u64)>> {
        self.with(|outbox| {
            let mut counts: BTreeMap<&'static str, (DeliveryStatus, u64)> = BTreeMap::new();
            for delivery in outbox.deliveries.values() {
                let status = delivery.status();
                counts.entry(status.as_str()).or_insert((status, 0)).1 += 1;
            }
            Ok(counts.into_values().collect())
        })
    }

    async fn prune_outbox(&self, before: SystemTime) -> Result<OutboxPruned> {
        self.with(|outbox| {
            let deliveries_before = outbox.deliveries.len();
            outbox.deliveries.retain(|_, delivery| {
                delivery.state == DeliveryState::Pending || delivery.created_at >= before
            });
            let events_before = outbox.events.len();
            let Outbox {
                events, deliveries, ..
            } = outbox;
            events.retain(|_, event| {
                event.created_at >= before
                    || deliveries
                        .range((event.id.clone(), String::new())..)
                        .next()
                        .is_some_and(|((event_id, _), _)| event_id == &event.id)
            });
            Ok(OutboxPruned {
                deliveries: (deliveries_before - deliveries.len()) as u64,
                events: (events_before - events.len()) as u64,
            })
        })
    }
}
