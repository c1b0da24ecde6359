//! Notifications, server side: webhook endpoints as an admin manages them and the sender
//! that delivers the outbox (the watch streams are in `grpc::watch`). The outbox itself is
//! written by the storage backends, in the transaction of each change (contract 12).

pub mod key;
pub mod sender;

use std::sync::Arc;
use std::time::SystemTime;

use checkpointd_core::domain::Tenant;
use checkpointd_core::error::{Error, Missing, Result};
use checkpointd_storage::notifications::{
    Delivery, DeliveryFilter, NotificationStore, WebhookEndpoint,
};

pub use key::NotificationKey;

/// Longest endpoint URL, in bytes.
const MAX_URL_BYTES: usize = 2048;
/// Longest endpoint description, in bytes.
const MAX_DESCRIPTION_BYTES: usize = 256;
/// Most deliveries one listing returns.
pub const MAX_DELIVERY_PAGE: usize = 1000;

/// Endpoints and deliveries, over a [`NotificationStore`].
#[derive(Clone)]
pub struct Notifications {
    store: Arc<dyn NotificationStore>,
    key: Option<Arc<NotificationKey>>,
}

/// A new endpoint and its secret, shown once.
pub struct CreatedEndpoint {
    pub endpoint: WebhookEndpoint,
    pub secret: String,
}

impl Notifications {
    pub fn new(store: Arc<dyn NotificationStore>, key: Option<Arc<NotificationKey>>) -> Self {
        Self { store, key }
    }

    pub fn store(&self) -> &Arc<dyn NotificationStore> {
        &self.store
    }

    /// Adds an endpoint for `tenant` with a fresh id and salt and returns its secret.
    pub async fn create_endpoint(
        &self,
        tenant: &Tenant,
        url: &str,
        description: &str,
    ) -> Result<CreatedEndpoint> {
        let Some(key) = &self.key else {
            return Err(Error::FailedPrecondition(
                "webhooks are off: start the server with --webhook-key-file".into(),
            ));
        };
        check_url(url)?;
        if description.len() > MAX_DESCRIPTION_BYTES || description.chars().any(char::is_control) {
            return Err(Error::invalid(
                "description",
                format!(
                    "description must be at most {MAX_DESCRIPTION_BYTES} bytes of printable text"
                ),
            ));
        }
        let mut salt = vec![0u8; 16];
        getrandom::fill(&mut salt)
            .map_err(|error| Error::internal(format!("no randomness for a salt: {error}")))?;
        let endpoint = WebhookEndpoint {
            id: format!("ep_{}", uuid_v7()),
            tenant: tenant.clone(),
            url: url.to_owned(),
            description: description.to_owned(),
            salt,
            created_at: checkpointd_core::time::whole_micros(SystemTime::now()),
        };
        self.store.create_endpoint(&endpoint).await?;
        let secret = key::secret_text(&key.signing_key(tenant, &endpoint.id, &endpoint.salt));
        Ok(CreatedEndpoint { endpoint, secret })
    }

    pub async fn list_endpoints(&self, tenant: &Tenant) -> Result<Vec<WebhookEndpoint>> {
        self.store.list_endpoints(tenant).await
    }

    /// Deletes the tenant's endpoint; another tenant's, or none, is not found.
    pub async fn delete_endpoint(&self, tenant: &Tenant, id: &str) -> Result<()> {
        if self.store.delete_endpoint(tenant, id).await? {
            Ok(())
        } else {
            Err(Error::NotFound(Missing::WebhookEndpoint {
                endpoint_id: id.to_owned(),
            }))
        }
    }

    pub async fn list_deliveries(
        &self,
        tenant: &Tenant,
        filter: &DeliveryFilter,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        self.store
            .list_deliveries(tenant, filter, limit.clamp(1, MAX_DELIVERY_PAGE))
            .await
    }
}

fn uuid_v7() -> String {
    checkpointd_core::queue::TaskId::generate()
        .as_str()
        .to_owned()
}

/// An endpoint URL: http or https, absolute, printable, bounded.
fn check_url(url: &str) -> Result<()> {
    let invalid = |why: &str| Err(Error::invalid("url", format!("url {why}")));
    if url.len() > MAX_URL_BYTES {
        return invalid(&format!("must be at most {MAX_URL_BYTES} bytes"));
    }
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return invalid("must start with http:// or https://");
    };
    if rest.is_empty() || rest.starts_with('/') || url.chars().any(|c| c.is_control() || c == ' ') {
        return invalid("must name a host and hold no spaces or control characters");
    }
    match reqwest::Url::parse(url) {
        Ok(parsed) if parsed.host().is_some() => Ok(()),
        _ => invalid("is not a valid URL"),
    }
}
