//! Opens the database a URL names, seen through each contract it serves: the checkpoint store,
//! its retention contract, the task queue, the API keys and the notification outbox. Each database's crate implements
//! them all on one connection or pool; this is where the server picks the crate.

use std::sync::Arc;

use checkpointd_core::error::{Error, Result};
use checkpointd_core::secret::redact_url;
use checkpointd_postgres::{PostgresQueue, PostgresStore};
use checkpointd_sqlite::{SqliteQueue, SqliteStore};
use checkpointd_storage::keys::{ApiKeyStore, MemoryKeys};
use checkpointd_storage::notifications::NotificationStore;
use checkpointd_storage::queue::{MemoryQueue, TaskQueue};
use checkpointd_storage::store::{CheckpointStore, MemoryStore, RetentionStore, StoreOptions};

use crate::instrumented::{InstrumentedQueue, InstrumentedStore};

/// One database seen through each contract it serves, as the backend opened it: the
/// composition root ([`crate::app`]) adds the instrumentation ([`Opened::instrumented`]) and the
/// cache.
#[derive(Clone)]
pub struct Opened {
    /// Checkpoints, logs and journals: what the checkpoint engine (and any cache) wraps.
    pub store: Arc<dyn CheckpointStore>,
    /// Retention, pins and maintenance listings, on the same database and never cached.
    pub retention: Arc<dyn RetentionStore>,
    /// The task queue that shares the database.
    pub queue: Arc<dyn TaskQueue>,
    /// The API keys kept in the same database.
    pub keys: Arc<dyn ApiKeyStore>,
    /// Webhook endpoints, the outbox the queue writes its events to, and deliveries.
    pub notifications: Arc<dyn NotificationStore>,
    /// `db.system` of the backend: `postgresql`, `sqlite` or `memory`.
    pub db_system: &'static str,
}

impl Opened {
    /// `backend` as both store contracts, tagged with its `db.system`.
    fn of<S>(
        backend: Arc<S>,
        db_system: &'static str,
        queue: Arc<dyn TaskQueue>,
        keys: Arc<dyn ApiKeyStore>,
        notifications: Arc<dyn NotificationStore>,
    ) -> Self
    where
        S: CheckpointStore + RetentionStore,
    {
        Self {
            store: backend.clone(),
            retention: backend,
            queue,
            keys,
            notifications,
            db_system,
        }
    }

    /// The same database with every call of both store contracts and the queue timed and
    /// traced.
    pub fn instrumented(self) -> Self {
        Self {
            store: Arc::new(InstrumentedStore::new(self.store, self.db_system)),
            retention: Arc::new(InstrumentedStore::new(self.retention, self.db_system)),
            queue: InstrumentedQueue::wrap(self.queue, self.db_system),
            ..self
        }
    }
}

/// Opens the database a `--database` URL names (`memory://`, `sqlite://PATH`, `postgres://...`
/// or a libpq `key=value` connection string such as `host=db user=app dbname=checkpointd`): its
/// store contracts and the task queue, which shares it.
pub async fn open(url: &str, options: &StoreOptions) -> Result<Opened> {
    if url == "memory://" || url == "memory:" {
        let keys = Arc::new(MemoryKeys::new());
        let queue = Arc::new(MemoryQueue::new());
        let notifications = queue.notifications();
        // One outbox for the queue's events and the store's quarantines, as in a database.
        let store = Arc::new(MemoryStore::with_outbox(notifications.clone()));
        return Ok(Opened::of(store, "memory", queue, keys, notifications));
    }
    if let Some(path) = url.strip_prefix("sqlite://") {
        let store = Arc::new(SqliteStore::open(path).await?);
        let queue = Arc::new(SqliteQueue::new(store.clone()));
        return Ok(Opened::of(
            store.clone(),
            "sqlite",
            queue,
            store.clone(),
            store,
        ));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") || is_key_value(url) {
        let store = Arc::new(PostgresStore::connect(url, options).await?);
        let queue = Arc::new(PostgresQueue::new(store.clone()));
        return Ok(Opened::of(
            store.clone(),
            "postgresql",
            queue,
            store.clone(),
            store,
        ));
    }
    Err(Error::InvalidArgument(format!(
        "unsupported database url {:?}: use memory://, sqlite://PATH, postgres://... or a \
         key=value connection string (host=... dbname=...)",
        redact_url(url)
    )))
}

/// Whether `url` is a libpq `key=value` connection string rather than a URL: no scheme, and
/// every word a `key=value` pair (values may be quoted, as libpq allows).
fn is_key_value(url: &str) -> bool {
    !url.contains("://")
        && url.split_whitespace().next().is_some_and(|first| {
            first
                .split_once('=')
                .is_some_and(|(key, _)| !key.is_empty())
        })
}

#[cfg(test)]
mod key_value_tests {
    use super::is_key_value;

    #[test]
    fn a_libpq_key_value_string_is_told_from_a_url() {
        assert!(is_key_value(
            "host=db user=app dbname=checkpointd sslmode=require"
        ));
        assert!(is_key_value("host=127.0.0.1"));
        assert!(!is_key_value("sqlite:///tmp/x.db"));
        assert!(!is_key_value("postgres://u@h/d?sslmode=require"));
        assert!(!is_key_value("checkpointd.db"));
        assert!(!is_key_value("=oops"));
        assert!(!is_key_value(""));
    }
}
