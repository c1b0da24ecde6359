//! The `NotificationStore` contract: webhook endpoints, the outbox of events and their
//! deliveries.
//!
//! Task events are not written through this contract: each backend's [`TaskQueue`] writes the
//! event a transition raises (`checkpointd_core::notify::task_event`) and its deliveries in the
//! transaction of the transition itself (contract 12). This contract manages endpoints, appends
//! events that no state change carries (corrupt data found), and serves the delivery loop, the
//! delivery listing and the watch stream. The memory backend is here, the SQLite and Postgres
//! ones in their database's crate; one behaviour suite (`crate::notification_tests`, with the
//! queue of the same database) runs against all of them.
//!
//! [`TaskQueue`]: crate::queue::TaskQueue

mod memory;

use std::time::{Duration, SystemTime};

use async_trait::async_trait;

pub use checkpointd_core::notify::{
    Delivery, DeliveryState, DeliveryStatus, DueDelivery, Event, EventKind, Settlement,
    WebhookEndpoint,
};
pub use memory::MemoryNotifications;

use checkpointd_core::domain::Tenant;
use checkpointd_core::error::Result;

/// Every column of the SQL backends' `webhook_endpoints`, `notification_events` and
/// `webhook_deliveries` tables, in one order, for their `SELECT` lists.
pub const ENDPOINT_COLUMNS: &str = "tenant, id, url, description, salt, created_at";
pub const EVENT_COLUMNS: &str = "seq, tenant, id, type, task_id, run_id, payload, created_at";
pub const DELIVERY_COLUMNS: &str = "tenant, event_id, endpoint_id, type, state, attempts, \
                                    next_attempt_at, last_error, delivered_at, created_at";

/// The SQL condition (the same in every dialect) that picks deliveries of one status.
pub fn status_condition(status: DeliveryStatus) -> &'static str {
    match status {
        DeliveryStatus::Pending => "state = 'pending' AND attempts = 0",
        DeliveryStatus::Failing => "state = 'pending' AND attempts > 0",
        DeliveryStatus::Delivered => "state = 'delivered'",
        DeliveryStatus::GivenUp => "state = 'given_up'",
    }
}

/// What an attempt's outcome writes to a pending delivery, besides counting the attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct SettledColumns {
    pub state: DeliveryState,
    /// The new due time; `None` keeps it.
    pub next_attempt_at: Option<SystemTime>,
    pub last_error: Option<String>,
    pub delivered_at: Option<SystemTime>,
}

impl SettledColumns {
    pub fn of(outcome: &Settlement, now: SystemTime) -> Self {
        let (state, next_attempt_at, last_error, delivered_at) = match outcome {
            Settlement::Delivered => (DeliveryState::Delivered, None, None, Some(now)),
            Settlement::RetryAt { at, error } => {
                (DeliveryState::Pending, Some(*at), Some(error.clone()), None)
            }
            Settlement::GiveUp { error } => {
                (DeliveryState::GivenUp, None, Some(error.clone()), None)
            }
        };
        Self {
            state,
            next_attempt_at,
            last_error,
            delivered_at,
        }
    }
}

/// What one [`NotificationStore::prune_outbox`] deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutboxPruned {
    pub deliveries: u64,
    pub events: u64,
}

/// Which deliveries [`NotificationStore::list_deliveries`] returns.
#[derive(Clone, Debug, Default)]
pub struct DeliveryFilter {
    pub endpoint_id: Option<String>,
    pub status: Option<DeliveryStatus>,
}

/// Endpoints, events and deliveries, scoped by tenant. Times are kept to whole microseconds.
#[async_trait]
pub trait NotificationStore: Send + Sync + 'static {
    /// Stores a new endpoint; an id the tenant already has is a `Conflict`.
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<()>;

    /// The tenant's endpoints, oldest first.
    async fn list_endpoints(&self, tenant: &Tenant) -> Result<Vec<WebhookEndpoint>>;

    /// Deletes the tenant's endpoint and every delivery to it; `false` when the tenant has no
    /// endpoint with this id (another tenant's is never touched).
    async fn delete_endpoint(&self, tenant: &Tenant, id: &str) -> Result<bool>;

    /// Appends an event with one pending delivery per endpoint its tenant has now, in one
    /// transaction; for events that no state change carries. Returns it with its sequence.
    async fn append_event(&self, event: &Event) -> Result<Event>;

    /// Takes up to `limit` pending deliveries due at `now` (of every tenant, earliest due
    /// first) with their endpoint and event, and moves each one's `next_attempt_at` to
    /// `now + lease`, so that no other sender takes it meanwhile and a sender that dies leaves
    /// it to be retried once the lease ends. Attempts are counted by [`Self::settle`].
    async fn take_due(
        &self,
        now: SystemTime,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<DueDelivery>>;

    /// Records one attempt's outcome: counts the attempt, and marks the delivery delivered,
    /// rescheduled with its error, or given up. `false` when the delivery is gone (its endpoint
    /// was deleted). A settled delivery (delivered or given up) stays as it is.
    async fn settle(
        &self,
        event_id: &str,
        endpoint_id: &str,
        outcome: &Settlement,
        now: SystemTime,
    ) -> Result<bool>;

    /// Up to `limit` of the tenant's deliveries, newest first, as `filter` narrows them.
    async fn list_deliveries(
        &self,
        tenant: &Tenant,
        filter: &DeliveryFilter,
        limit: usize,
    ) -> Result<Vec<Delivery>>;

    /// Up to `limit` of the tenant's events with a sequence above `after`, in sequence order.
    async fn events_after(&self, tenant: &Tenant, after: u64, limit: usize) -> Result<Vec<Event>>;

    /// How many deliveries have each status, over every tenant: the outbox-depth metric.
    async fn delivery_depth(&self) -> Result<Vec<(DeliveryStatus, u64)>>;

    /// Deletes, over every tenant, what the outbox keeps no longer: settled deliveries
    /// (delivered or given up) created before `before`, then events created before `before`
    /// that have no delivery left. A pending or failing delivery is never deleted, nor is its
    /// event. In one transaction; returns how many of each went.
    async fn prune_outbox(&self, before: SystemTime) -> Result<OutboxPruned>;
}
