//! The cache across real processes: two `checkpointd serve` instances sharing one Postgres and
//! one Redis, and a private `redis-server` SIGKILLed in the middle of a stream of requests.

use std::net::SocketAddr;

use checkpointd::proto::LoadLatestRequest;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::support::requests::{message, save};
use crate::support::{
    PgSchema, RedisProcess, ServerProcess, TcpProxy, cached_step, channel, connect, latest_step,
    redis_url, unique_prefix, wait_until,
};

async fn health(addr: SocketAddr, service: &str) -> ServingStatus {
    let mut client = HealthClient::new(channel(addr).await);
    let status = client
        .check(HealthCheckRequest {
            service: service.to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
        .status;
    ServingStatus::try_from(status).unwrap()
}

#[tokio::test]
async fn two_instances_saving_alternately_always_load_the_true_latest() {
    let schema = PgSchema::create().await;
    let (redis, prefix) = (redis_url(), unique_prefix());
    let cache_args = ["--redis", &redis, "--cache-prefix", &prefix];
    let first = ServerProcess::start(&schema.url(), &cache_args);
    let second = ServerProcess::start(&schema.url(), &cache_args);
    let mut clients = [connect(first.addr).await, connect(second.addr).await];

    for step in 1..=30_i64 {
        let writer = usize::try_from(step % 2).unwrap();
        let mut request = save("shared", step, format!("state {step}").as_bytes());
        request.message_offset = u64::try_from(step - 1).unwrap();
        request.messages = vec![message("user", &format!("turn {step}"))];
        clients[writer].save(request).await.unwrap();
        // Read from both, twice, so the second read of each can be a hit.
        for _ in 0..2 {
            for client in &mut clients {
                let checkpoint = client
                    .load_latest(LoadLatestRequest {
                        run_id: "shared".into(),
                        ..Default::default()
                    })
                    .await
                    .unwrap()
                    .into_inner()
                    .checkpoint
                    .unwrap();
                assert_eq!(checkpoint.step, step);
                assert_eq!(checkpoint.state, format!("state {step}").as_bytes());
                assert_eq!(checkpoint.messages.len(), usize::try_from(step).unwrap());
            }
        }
    }
}

/// The crash the cache must survive: one server commits a Save, its cache write never reaches
/// Redis, and the server dies (SIGKILL). Redis still holds the previous step, which the other
/// server had cached and served; from now on it must serve the store's step, and so must a
/// server started afterwards.
#[tokio::test]
async fn a_server_killed_between_commit_and_cache_write_leaves_no_stale_hit_on_another() {
    let schema = PgSchema::create().await;
    let redis = RedisProcess::start().await;
    let prefix = unique_prefix();
    let redis_addr: SocketAddr = redis.url().trim_start_matches("redis://").parse().unwrap();
    let mut link = TcpProxy::start(redis_addr).await;
    let through_link = format!("redis://{}", link.addr);
    let mut doomed = ServerProcess::start(
        &schema.url(),
        &["--redis", &through_link, "--cache-prefix", &prefix],
    );
    let survivor = ServerProcess::start(
        &schema.url(),
        &["--redis", &redis.url(), "--cache-prefix", &prefix],
    );
    connect(doomed.addr)
        .await
        .save(save("crash", 1, b"state 1"))
        .await
        .unwrap();
    wait_until("step 1 is cached", || async {
        cached_step(&redis.url(), &prefix, "crash").await == Some(1)
    })
    .await;
    assert_eq!(
        latest_step(&mut connect(survivor.addr).await, "crash").await,
        1
    );

    // The doomed server loses Redis, commits step 2 (acknowledged: the Save returns OK), and
    // dies before any cache write of it could land.
    link.cut().await;
    connect(doomed.addr)
        .await
        .save(save("crash", 2, b"state 2"))
        .await
        .expect("a Save never fails because Redis is unreachable");
    doomed.kill9();
    assert_eq!(
        cached_step(&redis.url(), &prefix, "crash").await,
        Some(1),
        "the test needs Redis to hold the stale step"
    );

    for _ in 0..3 {
        assert_eq!(
            latest_step(&mut connect(survivor.addr).await, "crash").await,
            2,
            "the stale cached step was served"
        );
    }
    let restarted = ServerProcess::start(
        &schema.url(),
        &["--redis", &redis.url(), "--cache-prefix", &prefix],
    );
    assert_eq!(
        latest_step(&mut connect(restarted.addr).await, "crash").await,
        2
    );
    wait_until("the entry is refilled from the store", || async {
        cached_step(&redis.url(), &prefix, "crash").await == Some(2)
    })
    .await;
    assert_eq!(
        latest_step(&mut connect(restarted.addr).await, "crash").await,
        2
    );
}

#[tokio::test]
async fn redis_dying_mid_stream_causes_no_client_errors_and_no_stale_reads_after_it_returns() {
    let schema = PgSchema::create().await;
    let mut redis = RedisProcess::start().await;
    let prefix = unique_prefix();
    let server = ServerProcess::start(
        &schema.url(),
        &["--redis", &redis.url(), "--cache-prefix", &prefix],
    );
    let mut client = connect(server.addr).await;
    wait_until("the cache is healthy", || async {
        health(server.addr, "checkpointd.cache").await == ServingStatus::Serving
    })
    .await;

    let mut step = 0_i64;
    let mut next = async |client: &mut _| {
        step += 1;
        let client: &mut checkpointd::proto::checkpoint_service_client::CheckpointServiceClient<_> =
            client;
        client
            .save(save("stream", step, format!("state {step}").as_bytes()))
            .await
            .expect("save must not fail whatever Redis does");
        let checkpoint = client
            .load_latest(LoadLatestRequest {
                run_id: "stream".into(),
                ..Default::default()
            })
            .await
            .expect("load must not fail whatever Redis does")
            .into_inner()
            .checkpoint
            .unwrap();
        assert_eq!(checkpoint.step, step, "a stale checkpoint was served");
    };

    for _ in 0..10 {
        next(&mut client).await;
    }
    // Cache writes are asynchronous: let step 10 land before Redis dies holding it.
    wait_until("step 10 is cached", || async {
        cached_step(&redis.url(), &prefix, "stream").await == Some(10)
    })
    .await;
    redis.kill9();
    for _ in 0..10 {
        next(&mut client).await;
    }
    assert_eq!(health(server.addr, "").await, ServingStatus::Serving);
    wait_until("the cache is reported degraded", || async {
        health(server.addr, "checkpointd.cache").await == ServingStatus::NotServing
    })
    .await;

    // The restarted Redis reloads its append-only file: it holds step 10, ten steps stale.
    redis.restart().await;
    wait_until("the cache is used again", || async {
        health(server.addr, "checkpointd.cache").await == ServingStatus::Serving
    })
    .await;
    assert_eq!(cached_step(&redis.url(), &prefix, "stream").await, Some(10));
    let latest = client
        .load_latest(LoadLatestRequest {
            run_id: "stream".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .checkpoint
        .unwrap();
    assert_eq!(
        latest.step, 20,
        "the stale entry from before the outage was served"
    );
    // The read refilled the entry, so Redis is back in use.
    wait_until("the entry is refilled", || async {
        cached_step(&redis.url(), &prefix, "stream").await == Some(20)
    })
    .await;
    for _ in 0..10 {
        next(&mut client).await;
    }
}

#[tokio::test]
async fn a_hit_is_counted_as_a_hit_in_the_exported_metrics() {
    let schema = PgSchema::create().await;
    let (redis, prefix) = (redis_url(), unique_prefix());
    let server = ServerProcess::start(
        &schema.url(),
        &["--redis", &redis, "--cache-prefix", &prefix],
    );
    let mut client = connect(server.addr).await;
    client.save(save("metered", 1, b"state")).await.unwrap();
    wait_until("the save is cached", || async {
        cached_step(&redis, &prefix, "metered").await.is_some()
    })
    .await;
    for _ in 0..3 {
        client
            .load_latest(LoadLatestRequest {
                run_id: "metered".into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }

    let (status, body) = crate::telemetry::http_get(server.admin_addr, "/metrics").await;
    assert_eq!(status, 200);
    let hits: f64 = body
        .lines()
        .filter(|line| {
            line.starts_with("checkpointd_cache_lookups")
                && line.contains("checkpoint_cache_hit=\"true\"")
        })
        .map(|line| line.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap())
        .sum();
    assert_eq!(hits, 3.0, "{body}");
}
