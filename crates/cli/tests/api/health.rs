//! Health follows the store: NOT_SERVING while Postgres is unreachable, SERVING once it returns.

use std::net::SocketAddr;
use std::time::Duration;

use checkpointd::config::ServerSettings;
use tonic_health::pb::health_check_response::ServingStatus;

use crate::support::requests::save;
use crate::support::{
    PgSchema, TcpProxy, TestApp, next_status, serve_draining, serve_on, watch_health,
};

fn postgres_addr() -> SocketAddr {
    let url = crate::support::database_url();
    let config: tokio_postgres::Config = url.parse().unwrap();
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(host) => host.clone(),
        #[allow(unreachable_patterns)]
        _ => panic!("TEST_DATABASE_URL must use a TCP host"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let host = if host == "localhost" {
        "127.0.0.1".to_owned()
    } else {
        host
    };
    format!("{host}:{port}").parse().unwrap()
}

/// A Postgres-backed server that reaches its database through a proxy the test can cut, and
/// re-checks the store every 200 ms. Keep the schema alive as long as the server.
pub(crate) async fn serve_through_proxy() -> (TestApp, TcpProxy, PgSchema) {
    let schema = PgSchema::create().await;
    let proxy = TcpProxy::start(postgres_addr()).await;
    let url = schema
        .url()
        .replacen(&postgres_addr().to_string(), &proxy.addr.to_string(), 1)
        .replacen("localhost:", "127.0.0.1:", 1);
    assert!(url.contains(&proxy.addr.to_string()), "{url}");
    let app = serve_on(
        &url,
        ServerSettings {
            health_interval: Duration::from_millis(200),
            ..ServerSettings::default()
        },
    )
    .await;
    (app, proxy, schema)
}

#[tokio::test]
async fn health_is_not_serving_while_postgres_is_unreachable() {
    let (app, mut proxy, schema) = serve_through_proxy().await;
    let mut statuses = watch_health(&app, "checkpoint.v1.CheckpointService").await;
    assert_eq!(next_status(&mut statuses).await, ServingStatus::Serving);

    proxy.cut().await;
    assert_eq!(next_status(&mut statuses).await, ServingStatus::NotServing);
    let mut client = app.client().await;
    let error = client.save(save("run-1", 1, b"{}")).await.unwrap_err();
    assert_eq!(error.code(), tonic::Code::Unavailable, "{error:?}");
    assert!(
        !error.message().contains("127.0.0.1"),
        "driver text leaked: {}",
        error.message()
    );

    proxy.restore().await;
    assert_eq!(next_status(&mut statuses).await, ServingStatus::Serving);
    client.save(save("run-1", 1, b"{}")).await.unwrap();
    drop(schema);
}

#[tokio::test]
async fn health_turns_not_serving_as_soon_as_shutdown_begins() {
    let mut app = serve_draining(Duration::from_secs(60)).await;
    let mut statuses = watch_health(&app, "").await;
    assert_eq!(next_status(&mut statuses).await, ServingStatus::Serving);

    app.begin_shutdown();

    // This open Watch stream alone keeps the drain going for a minute, so the change can only
    // arrive in time if health is told first.
    assert_eq!(next_status(&mut statuses).await, ServingStatus::NotServing);
}
