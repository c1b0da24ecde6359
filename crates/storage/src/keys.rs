//! The `ApiKeyStore` contract: API keys kept beside the data they guard, created, listed and
//! revoked by `checkpointd keys` and looked up by the server on every authenticated call.
//!
//! The memory backend is here, the SQLite and Postgres ones in their database's crate; one
//! behaviour suite (`tests`) runs against all of them.

mod changes;
mod memory;
#[cfg(any(test, feature = "testsuite"))]
pub mod tests;

use std::time::SystemTime;

use async_trait::async_trait;

pub use changes::{KeyChange, KeyChanges, KeyWatch};
pub use memory::MemoryKeys;

use checkpointd_core::domain::{ApiKey, Role, Tenant, TenantScope};
use checkpointd_core::error::{Error, Result};

/// API keys by id. Times are kept to whole microseconds.
#[async_trait]
pub trait ApiKeyStore: Send + Sync {
    /// Stores a new key; an id already taken is a `Conflict` and changes nothing.
    async fn create_key(&self, key: &ApiKey) -> Result<()>;

    /// The key with this id, revoked or not.
    async fn find_key(&self, id: &str) -> Result<Option<ApiKey>>;

    /// Every key, oldest first (ties by id).
    async fn list_keys(&self) -> Result<Vec<ApiKey>>;

    /// Marks the key revoked at `at`; `false` when no key has this id. Revoking a revoked key
    /// keeps its first revocation time and answers `true`.
    async fn revoke_key(&self, id: &str, at: SystemTime) -> Result<bool>;

    /// A feed of the ids of keys created or revoked from now on, for caches of verified keys.
    /// Every backend tells of the changes made through itself as they are made; Postgres also
    /// tells of those other processes commit (`LISTEN`), SQLite and memory cannot (a cache
    /// then relies on its entries expiring). A wrapper forwards its inner store's feed.
    fn watch_keys(&self) -> KeyWatch;
}

/// The stored text of a tenant scope: NULL for all tenants.
pub fn scope_text(scope: &TenantScope) -> Option<&str> {
    match scope {
        TenantScope::One(tenant) => Some(tenant.as_str()),
        TenantScope::All => None,
    }
}

/// A stored scope and role back into domain types; a row no release wrote is `Internal`.
pub fn decode_binding(tenant: Option<String>, role: &str) -> Result<(TenantScope, Role)> {
    let scope = match tenant {
        None => TenantScope::All,
        Some(text) => TenantScope::One(
            Tenant::parse(&text)
                .map_err(|_| Error::internal(format!("api key row holds tenant {text:?}")))?,
        ),
    };
    let role = role
        .parse()
        .map_err(|_| Error::internal(format!("api key row holds role {role:?}")))?;
    Ok((scope, role))
}
