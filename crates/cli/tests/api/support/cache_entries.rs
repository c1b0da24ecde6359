//! What checkpointd's Redis cache holds for a run, read straight from Redis.

use checkpointd::cache::RunKeys;
use checkpointd::proto::Checkpoint;
use checkpointd_core::domain::{RunId, RunKey, Tenant};
use checkpointd_testkit::redis_connection;
use prost::Message as _;
use redis::AsyncCommands;

/// The Redis keys of a default-tenant run's cache entry.
pub fn cache_keys(prefix: &str, run_id: &str) -> RunKeys {
    let run = RunKey::new(Tenant::default_tenant(), RunId::parse(run_id).unwrap());
    RunKeys::new(prefix, &run)
}

/// The step of the checkpoint a Redis holds for a default-tenant run, if any.
pub async fn cached_step(redis_url: &str, prefix: &str, run_id: &str) -> Option<i64> {
    let raw: Option<Vec<u8>> = redis_connection(redis_url)
        .await
        .get(cache_keys(prefix, run_id).checkpoint)
        .await
        .unwrap();
    raw.map(|raw| Checkpoint::decode(raw.as_slice()).unwrap().step)
}
