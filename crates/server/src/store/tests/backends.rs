//! The backends the behaviour suite runs on, each a [`TestBackend`], and one test module per
//! backend instantiating the whole suite.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tempfile::TempDir;

use super::settled::Settled;
use super::{TestBackend, TestSchema};
use crate::cache::{CacheSettings, CachedStore, RunKeys};
use crate::domain::{RunKey, Step};
use crate::store::{
    CheckpointStore, InstrumentedStore, MemoryStore, PostgresStore, RetentionStore, SqliteStore,
};

/// A state no checkpoint in the suite was saved with.
const DAMAGED_STATE: &[u8] = b"\x00";

pub(crate) struct Memory(Arc<MemoryStore>);

impl TestBackend for Memory {
    async fn create() -> Self {
        Self(Arc::new(MemoryStore::new()))
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.0.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.0.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        self.0.overwrite_state(run, step, DAMAGED_STATE);
    }
}

/// A database file in a directory of its own, removed with the backend.
pub(crate) struct Sqlite {
    store: Arc<SqliteStore>,
    path: String,
    _dir: TempDir,
}

impl TestBackend for Sqlite {
    async fn create() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("checkpointd.db").display().to_string();
        let store = Arc::new(SqliteStore::open(&path).await.expect("open sqlite"));
        Self {
            store,
            path,
            _dir: dir,
        }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.store.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        let changed = rusqlite::Connection::open(&self.path)
            .expect("raw sqlite connection")
            .execute(
                "UPDATE checkpoints SET state = ?4 WHERE tenant = ?1 AND run_id = ?2 AND step = ?3",
                rusqlite::params![
                    run.tenant.as_str(),
                    run.run_id.as_str(),
                    step.as_i64(),
                    DAMAGED_STATE
                ],
            )
            .expect("damage a checkpoint");
        assert_eq!(changed, 1, "no checkpoint at step {step} to damage");
    }
}

/// A schema of its own in the Postgres at `TEST_DATABASE_URL`.
pub(crate) struct Postgres {
    store: Arc<PostgresStore>,
    schema: TestSchema,
}

impl TestBackend for Postgres {
    async fn create() -> Self {
        let schema = TestSchema::create().await;
        let store = Arc::new(schema.store().await);
        Self { store, schema }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.store.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        let changed = super::raw_client(&self.schema.url())
            .await
            .execute(
                "UPDATE checkpoints SET state = $4 WHERE tenant = $1 AND run_id = $2 AND step = $3",
                &[
                    &run.tenant.as_str(),
                    &run.run_id.as_str(),
                    &step.as_i64(),
                    &DAMAGED_STATE,
                ],
            )
            .await
            .expect("damage a checkpoint");
        assert_eq!(changed, 1, "no checkpoint at step {step} to damage");
    }
}

/// The instrumented wrapper around another backend's store.
pub(crate) struct Instrumented<B> {
    inner: B,
    store: Arc<dyn CheckpointStore>,
    retention: Arc<dyn RetentionStore>,
}

impl<B: TestBackend> TestBackend for Instrumented<B> {
    async fn create() -> Self {
        let inner = B::create().await;
        let store = Arc::new(InstrumentedStore::new(inner.store(), "test"));
        let retention = Arc::new(InstrumentedStore::new(inner.retention(), "test"));
        Self {
            inner,
            store,
            retention,
        }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.retention.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        self.inner.damage_state(run, step).await;
    }
}

/// The Redis cache around another backend's store, on the Redis at `TEST_REDIS_URL` under a
/// key prefix of its own. Without Redis it fails: a cache that is never reached would let the
/// suite pass without testing the cache at all.
///
/// `SETTLED`: every call waits for the cache writer to catch up (see [`Settled`]), so reads
/// hit; otherwise the writer runs at its own pace and most reads race it.
pub(crate) struct Cached<B, const SETTLED: bool> {
    inner: B,
    cache: Arc<CachedStore>,
    store: Arc<dyn CheckpointStore>,
    redis: redis::Client,
    prefix: String,
}

fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

impl<B: TestBackend, const SETTLED: bool> TestBackend for Cached<B, SETTLED> {
    async fn create() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let prefix = format!(
            "cpd-suite-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let url = redis_url();
        let settings = CacheSettings {
            prefix: prefix.clone(),
            ttl: Duration::from_secs(60),
            // Generous: a test's Redis shares the machine with every other test.
            timeout: Duration::from_secs(5),
            ..CacheSettings::new(url.clone())
        };
        let inner = B::create().await;
        let cache = CachedStore::wrap(inner.store(), settings).expect("cache settings");
        let mut up = cache.status();
        tokio::time::timeout(Duration::from_secs(10), up.wait_for(|up| *up))
            .await
            .unwrap_or_else(|_| panic!("the cache tests need Redis at {url} (set TEST_REDIS_URL)"))
            .expect("the cache's status channel");
        let redis = redis::Client::open(url).expect("redis url");
        let store: Arc<dyn CheckpointStore> = if SETTLED {
            Arc::new(Settled(cache.clone()))
        } else {
            cache.clone()
        };
        Self {
            inner,
            cache,
            store,
            redis,
            prefix,
        }
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.store.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.inner.retention()
    }

    /// Damages the store's row and drops the run's entry, as when the damage happened at rest
    /// before anything was cached: a good cached copy would rightly still be served.
    async fn damage_state(&self, run: &RunKey, step: Step) {
        // Nothing queued earlier (a refill, say) may land after the eviction below.
        self.cache.flushed().await;
        self.inner.damage_state(run, step).await;
        let mut connection = self
            .redis
            .get_multiplexed_async_connection()
            .await
            .expect("a redis connection");
        redis::cmd("DEL")
            .arg(RunKeys::new(&self.prefix, run).all().as_slice())
            .query_async::<()>(&mut connection)
            .await
            .expect("evict the run's cache entry");
    }
}

mod memory {
    store_behaviours!(super::Memory);
}

mod sqlite {
    store_behaviours!(super::Sqlite);
}

mod postgres {
    store_behaviours!(super::Postgres);
}

mod instrumented_memory {
    store_behaviours!(super::Instrumented<super::Memory>);
}

mod cached_sqlite {
    store_behaviours!(super::Cached<super::Sqlite, true>);
}

mod cached_memory_racing_the_writer {
    store_behaviours!(super::Cached<super::Memory, false>);
}
