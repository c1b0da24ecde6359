//! API keys in process memory, for tests and throwaway runs (`memory://`).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;

use super::{ApiKeyStore, KeyChange, KeyChanges, KeyWatch};
use checkpointd_core::domain::ApiKey;
use checkpointd_core::error::{Error, Result};
use checkpointd_core::time::whole_micros;

/// See the module documentation.
#[derive(Default)]
pub struct MemoryKeys {
    keys: Mutex<BTreeMap<String, ApiKey>>,
    changes: KeyChanges,
}

impl MemoryKeys {
    pub fn new() -> Self {
        Self::default()
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, ApiKey>> {
        // A panic while holding the lock cannot leave a map half-changed: every change is one
        // insert or one field write.
        self.keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl ApiKeyStore for MemoryKeys {
    async fn create_key(&self, key: &ApiKey) -> Result<()> {
        let mut keys = self.keys();
        if keys.contains_key(&key.id) {
            return Err(Error::Conflict(format!("api key {} exists", key.id)));
        }
        let mut stored = key.clone();
        stored.created_at = whole_micros(stored.created_at);
        stored.revoked_at = stored.revoked_at.map(whole_micros);
        keys.insert(key.id.clone(), stored);
        drop(keys);
        self.changes.publish(KeyChange::Key(key.id.clone()));
        Ok(())
    }

    async fn find_key(&self, id: &str) -> Result<Option<ApiKey>> {
        Ok(self.keys().get(id).cloned())
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>> {
        let mut keys: Vec<ApiKey> = self.keys().values().cloned().collect();
        keys.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(keys)
    }

    async fn revoke_key(&self, id: &str, at: SystemTime) -> Result<bool> {
        let found = match self.keys().get_mut(id) {
            None => false,
            Some(key) => {
                key.revoked_at.get_or_insert(whole_micros(at));
                true
            }
        };
        if found {
            self.changes.publish(KeyChange::Key(id.to_owned()));
        }
        Ok(found)
    }

    fn watch_keys(&self) -> KeyWatch {
        self.changes.subscribe()
    }
}
