//! The checkpoint-store behaviour suite ([`checkpointd_storage::store::tests`]) against the Redis cache
//! wrapped around a store: once with the cache writer caught up after every call, so reads hit,
//! and once racing it, so reads see whatever the writer has reached.

mod settled;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use settled::Settled;

use super::{CachedStore, RunKeys};
use crate::config::CacheSettings;
use checkpointd_core::domain::{RunKey, Step};
use checkpointd_storage::store::tests::{Damage, TestBackend};
use checkpointd_storage::store::{CheckpointStore, RetentionStore};
use checkpointd_testkit::redis_url;

/// The Redis cache around another backend's store, on the testkit's Redis (`TEST_REDIS_URL`, or its own) under a
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

    /// Damages the store's journal entry and drops the run's entry, like `damage_state`.
    async fn damage_tool_output(&self, run: &RunKey, seq: u64) {
        self.cache.flushed().await;
        self.inner.damage_tool_output(run, seq).await;
        self.evict(run).await;
    }

    /// Damages the store's row and drops the run's entry, like `damage_state`.
    async fn damage(&self, run: &RunKey, damage: Damage) {
        self.cache.flushed().await;
        self.inner.damage(run, damage).await;
        self.evict(run).await;
    }

    /// Damages the store's row and drops the run's entry, as when the damage happened at rest
    /// before anything was cached: a good cached copy would rightly still be served.
    async fn damage_state(&self, run: &RunKey, step: Step) {
        // Nothing queued earlier (a refill, say) may land after the eviction below.
        self.cache.flushed().await;
        self.inner.damage_state(run, step).await;
        self.evict(run).await;
    }
}

impl<B: TestBackend, const SETTLED: bool> Cached<B, SETTLED> {
    async fn evict(&self, run: &RunKey) {
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

mod cached_sqlite {
    checkpointd_storage::store_behaviours!(crate::cache::tests::Cached<
        checkpointd_sqlite::testing::SqliteBackend,
        true,
    >);
}

mod cached_memory_racing_the_writer {
    checkpointd_storage::store_behaviours!(crate::cache::tests::Cached<
        checkpointd_storage::store::tests::MemoryBackend,
        false,
    >);
}
