//! The sender: delivers the outbox to webhook endpoints, at least once, signed.
//!
//! It polls for due deliveries, leases each (see `NotificationStore::take_due`) and sends it
//! on its own task, so one slow receiver holds up only its own delivery, and nothing here is
//! ever on the path of an RPC. A 2xx answer settles a delivery; anything else is retried by
//! `checkpointd_core::notify::after_failure` until it is given up.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::NotificationKey;
use crate::outbound::OutboundHttp;
use crate::telemetry::metrics;
use checkpointd_core::error::failure;
use checkpointd_core::notify::{DELIVERY_LEASE, DueDelivery, Settlement, after_failure};
use checkpointd_core::time::random_unit;
use checkpointd_storage::notifications::NotificationStore;

/// How often the outbox is looked at for due deliveries.
const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// Longest one attempt may take, connection included; well inside the lease.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most deliveries in flight at once per process.
const MAX_IN_FLIGHT: usize = 32;
/// Longest error text kept on a delivery.
const MAX_ERROR_BYTES: usize = 512;

/// See the module documentation.
pub struct Sender {
    store: Arc<dyn NotificationStore>,
    key: Arc<NotificationKey>,
    client: OutboundHttp,
    /// The console's integrity page as browsers reach it, when the console's public URL is
    /// known: an `integrity.corrupt` delivery carries it as `console_url`.
    integrity_page: Option<String>,
}

impl Sender {
    /// A sender over `store`, signing with keys derived from `key`, sending with `http`: the
    /// server's outbound client, so a receiver's certificate is trusted as `--outbound-ca-file`
    /// says, and a receiver's redirect is not followed (the signed body goes where it was told).
    pub fn new(
        store: Arc<dyn NotificationStore>,
        key: Arc<NotificationKey>,
        http: OutboundHttp,
    ) -> Self {
        Self {
            store,
            key,
            client: http,
            integrity_page: None,
        }
    }

    /// Links `integrity.corrupt` deliveries to the console at `public_url` (its URL as
    /// browsers reach it), so the person the webhook alerts lands on what was quarantined.
    pub fn with_console(mut self, public_url: Option<&str>) -> Self {
        self.integrity_page =
            public_url.map(|url| format!("{}/integrity", url.trim_end_matches('/')));
        self
    }

    /// Delivers until `stop` is cancelled. Deliveries in flight then are abandoned: their
    /// lease ends and a sender (this one after a restart, or another process) tries again.
    pub async fn run(self, stop: CancellationToken) {
        let this = Arc::new(self);
        let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        let mut in_flight = JoinSet::new();
        let mut ticks = tokio::time::interval(POLL_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                _ = ticks.tick() => {}
                Some(_) = in_flight.join_next(), if !in_flight.is_empty() => continue,
            }
            let free = slots.available_permits();
            if free == 0 {
                continue;
            }
            let due = match this
                .store
                .take_due(SystemTime::now(), DELIVERY_LEASE, free)
                .await
            {
                Ok(due) => due,
                Err(error) => {
                    tracing::warn!(%error, "cannot read the notification outbox");
                    continue;
                }
            };
            for delivery in due {
                let Ok(slot) = slots.clone().acquire_owned().await else {
                    break;
                };
                let sender = this.clone();
                in_flight.spawn(async move {
                    sender.deliver(delivery).await;
                    drop(slot);
                });
            }
        }
        in_flight.abort_all();
    }

    /// One attempt at one delivery, and its outcome recorded.
    async fn deliver(&self, due: DueDelivery) {
        let DueDelivery {
            delivery,
            endpoint,
            event,
        } = due;
        let outcome = match self.attempt(&endpoint, &event).await {
            Ok(()) => Settlement::Delivered,
            Err(error) => after_failure(
                delivery.attempts + 1,
                failure::truncated(error, MAX_ERROR_BYTES),
                SystemTime::now(),
                random_unit(),
            ),
        };
        match &outcome {
            Settlement::Delivered => metrics::record_webhook_delivery("delivered"),
            Settlement::RetryAt { error, .. } => {
                metrics::record_webhook_delivery("failed");
                tracing::info!(
                    event_id = %event.id, endpoint_id = %endpoint.id, %error,
                    attempts = delivery.attempts + 1, "webhook delivery failed; will retry"
                );
            }
            Settlement::GiveUp { error } => {
                metrics::record_webhook_delivery("given_up");
                tracing::warn!(
                    event_id = %event.id, endpoint_id = %endpoint.id, %error,
                    "webhook delivery given up"
                );
            }
        }
        if let Err(error) = self
            .store
            .settle(&event.id, &endpoint.id, &outcome, SystemTime::now())
            .await
        {
            // The lease will end and the delivery be tried again: at least once.
            tracing::warn!(%error, event_id = %event.id, "cannot record a webhook delivery");
        }
    }

    /// POSTs the event to the endpoint, signed; `Err` with what went wrong unless 2xx.
    async fn attempt(
        &self,
        endpoint: &checkpointd_core::notify::WebhookEndpoint,
        event: &checkpointd_core::notify::Event,
    ) -> Result<(), String> {
        let key = self
            .key
            .signing_key(&endpoint.tenant, &endpoint.id, &endpoint.salt);
        let body = linked(&event.payload, self.integrity_page.as_deref());
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs() as i64);
        let signature = standardwebhooks::Webhook::from_bytes(key.to_vec())
            .and_then(|webhook| webhook.sign(&event.id, timestamp, &body))
            .map_err(|error| format!("cannot sign: {error}"))?;
        let response = self
            .client
            .post(&endpoint.url)
            .header("content-type", "application/json")
            .header(standardwebhooks::HEADER_WEBHOOK_ID, &event.id)
            .header(
                standardwebhooks::HEADER_WEBHOOK_TIMESTAMP,
                timestamp.to_string(),
            )
            .header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE, signature)
            .body(body)
            .timeout(ATTEMPT_TIMEOUT)
            .send()
            .await
            .map_err(|error| describe(&error))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("HTTP {}", status.as_u16()))
        }
    }
}

/// `payload` as sent: an `integrity.corrupt` event with `console_url` added when the
/// console's integrity page is known (signed as sent, so receivers verify it as usual);
/// any other event, or no page, byte for byte as stored.
fn linked(payload: &[u8], integrity_page: Option<&str>) -> Vec<u8> {
    let Some(page) = integrity_page else {
        return payload.to_vec();
    };
    match serde_json::from_slice::<serde_json::Value>(payload) {
        Ok(serde_json::Value::Object(mut event))
            if event.get("type").and_then(serde_json::Value::as_str)
                == Some("integrity.corrupt") =>
        {
            event.insert("console_url".into(), page.into());
            serde_json::to_vec(&event).unwrap_or_else(|_| payload.to_vec())
        }
        _ => payload.to_vec(),
    }
}

/// A transport error as kept on the delivery: what failed, without the URL's query.
fn describe(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    failure::detail(kind, std::error::Error::source(error))
}

#[cfg(test)]
mod tests {
    use super::linked;

    #[test]
    fn a_corrupt_data_event_links_the_integrity_page_and_others_stay_as_stored() {
        let corrupt = br#"{"type":"integrity.corrupt","data":{"run_id":"r","step":2}}"#;
        let sent: serde_json::Value =
            serde_json::from_slice(&linked(corrupt, Some("https://c.example/integrity"))).unwrap();
        assert_eq!(sent["console_url"], "https://c.example/integrity");
        assert_eq!(sent["data"]["step"], 2);
        assert_eq!(linked(corrupt, None), corrupt.to_vec());
        let task = br#"{"type":"task.dead","data":{}}"#;
        assert_eq!(
            linked(task, Some("https://c.example/integrity")),
            task.to_vec()
        );
    }
}
