//! TLS and passwords towards the stores: a Postgres cluster started by the test with `ssl=on`
//! and a generated certificate, dialled with each `sslmode`; a `redis-server` with TLS only, and
//! one with a password, as the cache.

use std::time::Duration;

use checkpointd::config::CacheSettings;
use checkpointd::database;
use checkpointd_storage::store::StoreOptions;
use checkpointd_testkit::{PgHba, PgTlsCluster, RedisOptions, RedisProcess, TestCa};
use redis::AsyncCommands;

use crate::support::requests::save;
use crate::support::{cache_keys, connect, serve_cached, unique_prefix};

async fn open(url: &str) -> Result<(), String> {
    database::open(
        url,
        &StoreOptions {
            pool_size: 1,
            ..Default::default()
        },
    )
    .await
    .map(drop)
    .map_err(|error| error.to_string())
}

#[tokio::test]
async fn postgres_over_tls_honours_each_sslmode() {
    let ca = TestCa::new("postgres test CA");
    // TLS only: a connection that works here is encrypted.
    let pg = PgTlsCluster::start(&ca, PgHba::TlsOnly);
    let root = format!("sslrootcert={}", ca.ca_cert().display());

    open(&pg.url("localhost", "sslmode=require")).await.unwrap();
    // The default, prefer, tries TLS first.
    open(&pg.url("localhost", "application_name=t"))
        .await
        .unwrap();
    open(&pg.url("localhost", &format!("sslmode=verify-full&{root}")))
        .await
        .unwrap();
    // verify-ca checks the chain only; 127.0.0.1 is not a name the certificate holds.
    open(&pg.url("127.0.0.1", &format!("sslmode=verify-ca&{root}")))
        .await
        .unwrap();

    let wrong_host = open(&pg.url("127.0.0.1", &format!("sslmode=verify-full&{root}")))
        .await
        .unwrap_err();
    assert!(wrong_host.contains("cannot reach postgres"), "{wrong_host}");
    let other_ca = TestCa::new("some other CA");
    let wrong_ca = format!(
        "sslmode=verify-ca&sslrootcert={}",
        other_ca.ca_cert().display()
    );
    assert!(open(&pg.url("localhost", &wrong_ca)).await.is_err());
    // require with a root CA verifies the chain, as libpq does.
    let require_wrong_ca = format!(
        "sslmode=require&sslrootcert={}",
        other_ca.ca_cert().display()
    );
    assert!(open(&pg.url("localhost", &require_wrong_ca)).await.is_err());
    let plain = open(&pg.url("localhost", "sslmode=disable"))
        .await
        .unwrap_err();
    assert!(plain.contains("cannot reach postgres"), "{plain}");
}

/// Saves one checkpoint through an app cached by `redis`, and waits for Redis to hold it.
async fn cache_works_through(redis: &RedisProcess, settings: CacheSettings) {
    let prefix = unique_prefix();
    let (app, cached) = serve_cached(
        "memory://",
        CacheSettings {
            prefix: prefix.clone(),
            ..settings
        },
    )
    .await;
    // Connected and answering PING: TLS and authentication worked.
    let mut up = cached.status();
    tokio::time::timeout(Duration::from_secs(15), up.wait_for(|up| *up))
        .await
        .expect("the cache connects to redis within 15 s")
        .unwrap();
    connect(app.addr)
        .await
        .save(save("secure-run", 1, b"state"))
        .await
        .unwrap();
    cached.flushed().await;
    let key = cache_keys(&prefix, "secure-run").checkpoint;
    let mut raw = redis
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let entry: Option<Vec<u8>> = raw.get(&key).await.unwrap();
    assert!(entry.is_some(), "nothing cached under {key}");
}

#[tokio::test]
async fn the_cache_works_over_rediss_with_the_ca() {
    let ca = TestCa::new("redis test CA");
    let cert = ca.server_cert("redis-server", &["127.0.0.1"]);
    let redis = RedisProcess::start_with(RedisOptions {
        tls: Some((cert, ca.ca_cert())),
        password: None,
    })
    .await;
    assert!(redis.url().starts_with("rediss://"));
    let settings = CacheSettings {
        ca_cert: Some(ca.ca_cert()),
        ..CacheSettings::new(redis.url())
    };
    cache_works_through(&redis, settings).await;
}

#[tokio::test]
async fn the_cache_works_with_a_redis_password() {
    let redis = RedisProcess::start_with(RedisOptions {
        tls: None,
        password: Some("cache-pw-5150".to_owned()),
    })
    .await;
    assert!(redis.url().contains(":cache-pw-5150@"));
    cache_works_through(&redis, CacheSettings::new(redis.url())).await;
}
