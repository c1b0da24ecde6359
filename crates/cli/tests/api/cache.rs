//! The Redis cache never changes an answer: hits equal the store byte for byte, and stale,
//! corrupt or unreachable cache entries fall back to the store without a client error.

use std::sync::Arc;

use checkpointd::cache::CachedStore;
use checkpointd::config::CacheSettings;
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{Checkpoint, LoadLatestRequest, LoadLatestResponse, ResumeRequest};
use prost::Message as _;
use redis::AsyncCommands;
use tonic::transport::Channel;

use crate::support::requests::{message, save, tool};
use crate::support::{
    PgSchema, TestApp, cache_keys, cached_step, connect, redis_connection, redis_url, serve_cached,
    serve_on, unique_prefix,
};

fn settings(prefix: &str) -> CacheSettings {
    CacheSettings {
        prefix: prefix.to_owned(),
        ..CacheSettings::new(redis_url())
    }
}

/// Waits for the cache writer to apply what is queued, then checks the run's cached step.
async fn assert_cached(cache: &CachedStore, prefix: &str, run_id: &str, step: i64) {
    cache.flushed().await;
    assert_eq!(
        cached_step(&redis_url(), prefix, run_id).await,
        Some(step),
        "the cached step of {run_id}"
    );
}

/// How many tool results Redis holds for a run; call after the writer has flushed.
async fn cached_tools(prefix: &str, run_id: &str) -> usize {
    let mut redis = redis_connection(&redis_url()).await;
    redis.llen(cache_keys(prefix, run_id).tools).await.unwrap()
}

async fn load_latest(
    client: &mut CheckpointServiceClient<Channel>,
    run_id: &str,
) -> LoadLatestResponse {
    client
        .load_latest(LoadLatestRequest {
            run_id: run_id.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
}

/// A Postgres schema served twice in-process: once through the cache, once without it.
struct Pair {
    _schema: PgSchema,
    cached: TestApp,
    plain: TestApp,
    cache: Arc<CachedStore>,
    prefix: String,
}

async fn pair() -> Pair {
    let schema = PgSchema::create().await;
    let prefix = unique_prefix();
    let (cached, cache) = serve_cached(&schema.url(), settings(&prefix)).await;
    let plain = serve_on(&schema.url(), Default::default()).await;
    Pair {
        _schema: schema,
        cached,
        plain,
        cache,
        prefix,
    }
}

/// Three checkpoints with messages and a tool result in between.
async fn write_history(client: &mut CheckpointServiceClient<Channel>, run_id: &str) {
    let mut offset = 0;
    for step in 1..=3 {
        let mut request = save(run_id, step, format!("{{\"step\":{step}}}").as_bytes());
        request.message_offset = offset;
        request.messages = vec![
            message("user", &format!("turn {step}")),
            message("assistant", "ok"),
        ];
        offset += 2;
        client.save(request).await.unwrap();
        client
            .record_tool_result(tool(run_id, &format!("call-{step}"), step, "sent"))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_cache_hit_returns_exactly_what_the_store_returns() {
    let pair = pair().await;
    let mut cached = connect(pair.cached.addr).await;
    let mut plain = connect(pair.plain.addr).await;
    write_history(&mut cached, "run-hit").await;
    assert_cached(&pair.cache, &pair.prefix, "run-hit", 3).await;
    assert_eq!(cached_tools(&pair.prefix, "run-hit").await, 3);
    let hits_before = pair.cache.stats().counts().hits;

    let from_cache = load_latest(&mut cached, "run-hit").await;
    let from_store = load_latest(&mut plain, "run-hit").await;

    assert_eq!(pair.cache.stats().counts().hits, hits_before + 1);
    assert_eq!(from_cache.encode_to_vec(), from_store.encode_to_vec());
    assert_eq!(from_cache.checkpoint.unwrap().messages.len(), 6);
    assert_eq!(from_cache.tool_results.len(), 3);
}

#[tokio::test]
async fn a_save_is_cached_after_its_commit_and_served_from_redis() {
    let pair = pair().await;
    let mut client = connect(pair.cached.addr).await;
    client.save(save("run-save", 1, b"one")).await.unwrap();
    assert_cached(&pair.cache, &pair.prefix, "run-save", 1).await;
    let response = load_latest(&mut client, "run-save").await;
    assert_eq!(response.checkpoint.unwrap().state, b"one");
    let counts = pair.cache.stats().counts();
    assert_eq!((counts.hits, counts.misses), (1, 0), "{counts:?}");
}

#[tokio::test]
async fn a_stale_entry_written_by_hand_is_never_served() {
    let pair = pair().await;
    let mut client = connect(pair.cached.addr).await;
    client.save(save("run-stale", 1, b"old")).await.unwrap();
    assert_cached(&pair.cache, &pair.prefix, "run-stale", 1).await;
    let key = cache_keys(&pair.prefix, "run-stale").checkpoint;
    let mut redis = redis_connection(&redis_url()).await;
    let old: Vec<u8> = redis.get(&key).await.unwrap();
    client.save(save("run-stale", 2, b"new")).await.unwrap();
    assert_cached(&pair.cache, &pair.prefix, "run-stale", 2).await;

    let () = redis.set(&key, old).await.unwrap();
    let response = load_latest(&mut client, "run-stale").await;

    assert_eq!(response.checkpoint.unwrap().state, b"new");
    assert_eq!(pair.cache.stats().counts().stale, 1);
}

#[tokio::test]
async fn a_corrupted_cached_payload_is_detected_and_the_store_copy_served() {
    let pair = pair().await;
    let mut client = connect(pair.cached.addr).await;
    let mut plain = connect(pair.plain.addr).await;
    write_history(&mut client, "run-rot").await;
    load_latest(&mut client, "run-rot").await;
    // Every write queued so far (a refill after that read, say) lands before the corruption,
    // so none can undo it.
    assert_cached(&pair.cache, &pair.prefix, "run-rot", 3).await;
    let hits_before = pair.cache.stats().counts().hits;
    let key = cache_keys(&pair.prefix, "run-rot").checkpoint;
    let mut redis = redis_connection(&redis_url()).await;
    let raw: Vec<u8> = redis.get(&key).await.unwrap();
    let mut header = Checkpoint::decode(raw.as_slice()).unwrap();
    header.state[0] ^= 0x20;
    let () = redis.set(&key, header.encode_to_vec()).await.unwrap();

    let response = load_latest(&mut client, "run-rot").await;

    assert_eq!(
        response.encode_to_vec(),
        load_latest(&mut plain, "run-rot").await.encode_to_vec()
    );
    assert_eq!(pair.cache.stats().counts().corrupt, 1);
    // The bad entry is replaced by the store's copy, which then hits.
    pair.cache.flushed().await;
    let refilled: Option<Vec<u8>> = redis.get(&key).await.unwrap();
    assert!(
        refilled.is_some_and(|raw| raw != header.encode_to_vec()),
        "the corrupt entry is replaced"
    );
    load_latest(&mut client, "run-rot").await;
    assert_eq!(pair.cache.stats().counts().hits, hits_before + 1);
}

#[tokio::test]
async fn a_write_by_another_instance_under_a_newer_epoch_is_never_hidden_by_the_cache() {
    let pair = pair().await;
    let mut cached = connect(pair.cached.addr).await;
    let mut other = connect(pair.plain.addr).await;
    cached
        .save(save("run-fenced", 1, b"first owner"))
        .await
        .unwrap();
    assert_cached(&pair.cache, &pair.prefix, "run-fenced", 1).await;
    assert_eq!(
        load_latest(&mut cached, "run-fenced")
            .await
            .checkpoint
            .unwrap()
            .state,
        b"first owner"
    );

    // Another instance, which has no cache, resumes the run and rewrites step 1.
    let epoch = other
        .resume(ResumeRequest {
            run_id: "run-fenced".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .epoch;
    let mut rewrite = save("run-fenced", 1, b"second owner");
    rewrite.epoch = Some(epoch);
    other.save(rewrite).await.unwrap();

    let response = load_latest(&mut cached, "run-fenced").await;
    let checkpoint = response.checkpoint.clone().unwrap();
    assert_eq!(checkpoint.state, b"second owner");
    assert_eq!(checkpoint.epoch, epoch);
    assert_eq!(
        response.encode_to_vec(),
        load_latest(&mut other, "run-fenced").await.encode_to_vec()
    );
}

#[tokio::test]
async fn a_tool_result_journalled_elsewhere_is_in_the_next_answer() {
    let pair = pair().await;
    let mut cached = connect(pair.cached.addr).await;
    let mut other = connect(pair.plain.addr).await;
    cached.save(save("run-tools", 1, b"s")).await.unwrap();
    assert_cached(&pair.cache, &pair.prefix, "run-tools", 1).await;
    other
        .record_tool_result(tool("run-tools", "c-1", 2, "done"))
        .await
        .unwrap();

    let response = load_latest(&mut cached, "run-tools").await;

    assert_eq!(response.tool_results.len(), 1);
    assert_eq!(pair.cache.stats().counts().stale, 1);
}

#[tokio::test]
async fn checkpoints_over_the_size_threshold_are_not_cached() {
    let schema = PgSchema::create().await;
    let prefix = unique_prefix();
    let (app, cache) = serve_cached(
        &schema.url(),
        CacheSettings {
            max_entry_bytes: 1024,
            ..settings(&prefix)
        },
    )
    .await;
    let mut client = connect(app.addr).await;
    client.save(save("run-big", 1, &[7; 4096])).await.unwrap();
    client.save(save("run-small", 1, b"small")).await.unwrap();
    assert_cached(&cache, &prefix, "run-small", 1).await;

    assert_eq!(cached_step(&redis_url(), &prefix, "run-big").await, None);
    assert_eq!(
        load_latest(&mut client, "run-big")
            .await
            .checkpoint
            .unwrap()
            .state
            .len(),
        4096
    );
    assert_eq!(
        cache.stats().counts().skipped_large,
        2,
        "the save and the read-through"
    );
}

#[tokio::test]
async fn an_unreachable_redis_is_bypassed_without_client_errors() {
    let schema = PgSchema::create().await;
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (app, cache) = serve_cached(
        &schema.url(),
        CacheSettings::new(format!("redis://127.0.0.1:{closed_port}")),
    )
    .await;
    let mut client = connect(app.addr).await;
    for step in 1..=5 {
        client.save(save("run-nocache", step, b"x")).await.unwrap();
        let response = load_latest(&mut client, "run-nocache").await;
        assert_eq!(response.checkpoint.unwrap().step, step);
    }
    let counts = cache.stats().counts();
    assert_eq!(counts.bypassed, 5, "{counts:?}");
    assert_eq!(counts.hits, 0);
}

/// A cached entry (a whole, verified log) served through pages smaller than it: the hit is cut
/// to the page with the digests a continuation needs, and the pages join into the history.
#[tokio::test]
async fn a_cache_hit_larger_than_a_page_comes_back_whole_through_its_continuation() {
    use checkpointd::proto::{ClientCapability, LoadAtStepRequest};
    let schema = PgSchema::create().await;
    let prefix = unique_prefix();
    let (app, cache) = checkpointd_serve_cached_with_pages(&schema.url(), &prefix).await;
    let mut client = connect(app.addr).await;
    write_history(&mut client, "run-1").await;
    assert_cached(&cache, &prefix, "run-1", 3).await;
    let paged = vec![ClientCapability::PagedMessages as i32];
    let first = client
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            capabilities: paged.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut messages = first.checkpoint.unwrap().messages;
    assert_eq!(
        messages.len(),
        2,
        "a page of 8 bytes holds \"turn 1\" and \"ok\""
    );
    let mut continuation = first.continuation;
    while !continuation.is_empty() {
        let page = client
            .load_at_step(LoadAtStepRequest {
                run_id: "run-1".into(),
                continuation,
                capabilities: paged.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        messages.extend(page.checkpoint.unwrap().messages);
        continuation = page.continuation;
    }
    let contents: Vec<_> = messages.iter().map(|m| m.content.clone()).collect();
    let expected: Vec<Vec<u8>> = ["turn 1", "ok", "turn 2", "ok", "turn 3", "ok"]
        .iter()
        .map(|text| text.as_bytes().to_vec())
        .collect();
    assert_eq!(contents, expected);
}

async fn checkpointd_serve_cached_with_pages(
    url: &str,
    prefix: &str,
) -> (TestApp, Arc<CachedStore>) {
    let (app, cached) = crate::support::serve_config(checkpointd::config::ServeConfig {
        cache: Some(settings(prefix)),
        server: checkpointd::config::ServerSettings {
            answers: checkpointd::config::AnswerLimits {
                page_bytes: 8,
                ..Default::default()
            },
            ..Default::default()
        },
        store: checkpointd_storage::store::StoreOptions {
            pool_size: 4,
            ..Default::default()
        },
        database: url.into(),
        ..checkpointd::config::ServeConfig::default()
    })
    .await;
    (app, cached.expect("the app has the configured cache"))
}
