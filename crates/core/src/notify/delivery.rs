//! Webhook endpoints, deliveries of events to them, and the rule that decides what a failed
//! attempt leads to: a retry after an exponential backoff with jitter, or giving up.

use std::time::{Duration, SystemTime};

use super::event::{Event, EventKind};
use crate::domain::Tenant;
use crate::error::{Error, Result};

/// Attempts before a delivery is given up: with [`retry_delay`], about 2.5 hours of trying.
pub const MAX_DELIVERY_ATTEMPTS: u32 = 12;

/// How long a sender holds a delivery it took before another sender (or itself, after a
/// restart) may take it again: longer than any attempt's timeout.
pub const DELIVERY_LEASE: Duration = Duration::from_secs(60);

const FIRST_RETRY: Duration = Duration::from_secs(5);
const LONGEST_RETRY: Duration = Duration::from_secs(3600);
/// Spread of each retry delay, as a fraction of it, so receivers that come back are not hit by
/// every sender at once.
const JITTER: f64 = 0.2;

/// A tenant's webhook endpoint. Its signing secret is not here: it is derived from the
/// server's notification key and `salt` (see docs/notifications.md), so the row holds nothing
/// secret.
#[derive(Clone, Debug, PartialEq)]
pub struct WebhookEndpoint {
    pub id: String,
    pub tenant: Tenant,
    pub url: String,
    pub description: String,
    pub salt: Vec<u8>,
    pub created_at: SystemTime,
}

/// A delivery as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryState {
    Pending,
    Delivered,
    GivenUp,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::GivenUp => "given_up",
        }
    }

    pub fn parse(raw: &str) -> Result<Self> {
        match raw {
            "pending" => Ok(Self::Pending),
            "delivered" => Ok(Self::Delivered),
            "given_up" => Ok(Self::GivenUp),
            _ => Err(Error::internal(format!("delivery row holds state {raw:?}"))),
        }
    }
}

/// A delivery as operators see it: a pending delivery already tried is failing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    Pending,
    Failing,
    Delivered,
    GivenUp,
}

impl DeliveryStatus {
    pub const ALL: [DeliveryStatus; 4] =
        [Self::Pending, Self::Failing, Self::Delivered, Self::GivenUp];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Failing => "failing",
            Self::Delivered => "delivered",
            Self::GivenUp => "given_up",
        }
    }

    pub fn parse(raw: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == raw)
            .ok_or_else(|| {
                Error::invalid(
                    "status",
                    format!(
                        "unknown delivery status {raw:?}: pending, failing, delivered or given_up"
                    ),
                )
            })
    }
}

/// One event's delivery to one endpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    pub event_id: String,
    pub endpoint_id: String,
    pub tenant: Tenant,
    pub kind: EventKind,
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    pub next_attempt_at: SystemTime,
    pub last_error: Option<String>,
    pub delivered_at: Option<SystemTime>,
    pub created_at: SystemTime,
}

impl Delivery {
    pub fn status(&self) -> DeliveryStatus {
        match self.state {
            DeliveryState::Delivered => DeliveryStatus::Delivered,
            DeliveryState::GivenUp => DeliveryStatus::GivenUp,
            DeliveryState::Pending if self.attempts == 0 => DeliveryStatus::Pending,
            DeliveryState::Pending => DeliveryStatus::Failing,
        }
    }
}

/// A delivery taken for sending, with what sending needs.
#[derive(Clone, Debug, PartialEq)]
pub struct DueDelivery {
    pub delivery: Delivery,
    pub endpoint: WebhookEndpoint,
    pub event: Event,
}

/// What one attempt came to.
#[derive(Clone, Debug, PartialEq)]
pub enum Settlement {
    Delivered,
    RetryAt { at: SystemTime, error: String },
    GiveUp { error: String },
}

/// The delay before the retry that follows attempt number `attempts` (1 for the first),
/// before jitter: 5 s, doubling, at most an hour.
pub fn retry_delay(attempts: u32) -> Duration {
    let doublings = attempts.saturating_sub(1).min(20);
    FIRST_RETRY
        .saturating_mul(1u32 << doublings)
        .min(LONGEST_RETRY)
}

/// What a failed attempt leads to, `attempts` counting it: give up after
/// [`MAX_DELIVERY_ATTEMPTS`], else retry after [`retry_delay`] spread by ±20 % by `unit`, a
/// number in [0, 1) the caller draws (so tests can fix it).
pub fn after_failure(attempts: u32, error: String, now: SystemTime, unit: f64) -> Settlement {
    if attempts >= MAX_DELIVERY_ATTEMPTS {
        return Settlement::GiveUp { error };
    }
    let spread = 1.0 - JITTER + 2.0 * JITTER * unit.clamp(0.0, 1.0);
    let delay = retry_delay(attempts).mul_f64(spread);
    Settlement::RetryAt {
        at: now + delay,
        error,
    }
}
