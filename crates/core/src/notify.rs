//! Notifications' meaning: the events task transitions and integrity findings raise, the
//! webhook endpoints and deliveries that carry them, and the delivery retry rule. Pure: the
//! storage backends decide and write events in the transaction of the change that caused them.

mod delivery;
mod event;

pub use delivery::{
    DELIVERY_LEASE, Delivery, DeliveryState, DeliveryStatus, DueDelivery, MAX_DELIVERY_ATTEMPTS,
    Settlement, WebhookEndpoint, after_failure, retry_delay,
};
pub use event::{CorruptFinding, Event, EventKind, corrupt_event, quarantine_event, task_event};

#[cfg(test)]
mod tests;
