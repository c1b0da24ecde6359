//! The app as `checkpointd serve` starts it, in-process: the admin port beside the gRPC port,
//! the cache's health when one is configured, and one shutdown that stops everything.

use std::net::SocketAddr;
use std::time::Duration;

use checkpointd::config::CacheSettings;
use tonic_health::pb::health_check_response::ServingStatus;

use crate::support::{
    Backend, next_status, redis_url, serve_cached, serve_draining, spawn_app, unique_prefix,
    watch_health,
};
use crate::telemetry::http_get;

async fn refuses_connections(addr: SocketAddr) -> bool {
    tokio::net::TcpStream::connect(addr).await.is_err()
}

#[tokio::test]
async fn the_admin_port_serves_the_apps_metrics_and_store_health() {
    let app = spawn_app(Backend::Sqlite).await;
    let saves = prometheus::IntCounter::new("test_saves_total", "saves seen by this test").unwrap();
    app.metrics.register(Box::new(saves.clone())).unwrap();
    saves.inc_by(3);

    let (status, body) = http_get(app.admin_addr, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("test_saves_total 3"), "{body}");
    let (status, body) = http_get(app.admin_addr, "/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok\n"));

    let mut statuses = watch_health(&app, "checkpoint.v1.CheckpointService").await;
    assert_eq!(next_status(&mut statuses).await, ServingStatus::Serving);
}

#[tokio::test]
async fn one_shutdown_stops_the_server_the_admin_port_and_every_background_task() {
    let mut app = spawn_app(Backend::Sqlite).await;
    app.client().await; // both ports are up before the shutdown
    assert!(!refuses_connections(app.admin_addr).await);
    assert!(!app.shutdown.is_finished());

    app.stop().await;

    assert!(app.shutdown.is_finished(), "a background task outlived run");
    assert!(
        refuses_connections(app.addr).await,
        "the gRPC port still accepts"
    );
    assert!(
        refuses_connections(app.admin_addr).await,
        "the admin port still accepts"
    );
}

#[tokio::test]
async fn an_open_stream_holds_the_drain_only_until_its_deadline() {
    let mut app = serve_draining(Duration::from_millis(300)).await;
    // A Watch stream never ends by itself, so only the deadline can end the drain.
    let mut statuses = watch_health(&app, "").await;
    assert_eq!(next_status(&mut statuses).await, ServingStatus::Serving);

    tokio::time::timeout(Duration::from_secs(10), app.stop())
        .await
        .expect("run did not return after the drain deadline");
    assert!(app.shutdown.is_finished());
}

#[tokio::test]
async fn the_cache_health_follows_redis_and_turns_not_serving_on_shutdown() {
    let cache = CacheSettings {
        prefix: unique_prefix(),
        ..CacheSettings::new(redis_url())
    };
    let (mut app, _cache) = serve_cached("memory://", cache).await;
    let mut statuses = watch_health(&app, "checkpointd.cache").await;
    let mut status = next_status(&mut statuses).await;
    if status == ServingStatus::NotServing {
        // The first status may precede the first Redis connection.
        status = next_status(&mut statuses).await;
    }
    assert_eq!(status, ServingStatus::Serving);

    app.begin_shutdown();
    assert_eq!(next_status(&mut statuses).await, ServingStatus::NotServing);
    drop(statuses);
    app.stop().await;
    assert!(app.shutdown.is_finished());
}
