//! A flood of forged API keys does not become a flood of database reads: 10,000 well-formed
//! keys with unknown ids, and keys with a known id but a wrong secret, against the server's own
//! router and auth layer over the real SQLite or Postgres key store, whose reads a thin wrapper
//! counts. A key made during the flood still works within one window, a key with the right
//! secret is admitted from memory, and a revocation through the store still takes effect on the
//! next call (the store tells the gate at once, whatever the cache TTL).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use checkpointd::config::{AuthSettings, ServerSettings};
use checkpointd::grpc::auth::key_gate::{MISSES_PER_WINDOW, WINDOW};
use checkpointd::grpc::auth::{AuthLayer, Authenticator};
use checkpointd::proto::LoadLatestRequest;
use checkpointd::service::{RetentionService, Services};
use checkpointd_core::domain::{ApiKey, Role};
use checkpointd_core::error::Result;
use checkpointd_storage::keys::{ApiKeyStore, KeyWatch};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;

use super::{api_key_auth, assert_unauthenticated, bearer, make_key, spawn_with_auth};
use crate::for_each_durable_backend;
use crate::support::{Backend, TestApp, connect, wait_until};

for_each_durable_backend!(
    ten_thousand_forged_key_ids_cost_a_handful_of_database_reads,
    a_known_id_is_refused_or_admitted_without_reading_the_database,
    a_fresh_key_is_served_on_many_first_calls_at_once,
);

/// Forged requests in the flood.
const FORGED: usize = 10_000;
/// Clients sending them at once.
const SENDERS: usize = 16;

/// The key store, counting every read the server makes of it.
struct CountingKeys {
    inner: Arc<dyn ApiKeyStore>,
    reads: AtomicUsize,
}

#[async_trait]
impl ApiKeyStore for CountingKeys {
    async fn create_key(&self, key: &ApiKey) -> Result<()> {
        self.inner.create_key(key).await
    }

    async fn find_key(&self, id: &str) -> Result<Option<ApiKey>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.find_key(id).await
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.list_keys().await
    }

    async fn revoke_key(&self, id: &str, at: SystemTime) -> Result<bool> {
        self.inner.revoke_key(id, at).await
    }

    fn watch_keys(&self) -> KeyWatch {
        self.inner.watch_keys()
    }
}

/// Longer than any of these tests, so a read they see is never one the TTL caused.
const CACHE_TTL: Duration = Duration::from_secs(600);

/// A second server on `app`'s database, built as `serve` builds one (same router, same auth
/// layer) but with its key store read through a counter and verified keys cached for
/// [`CACHE_TTL`].
async fn counted_server(app: &TestApp) -> (SocketAddr, Arc<CountingKeys>) {
    let keys = Arc::new(CountingKeys {
        inner: app.keys.clone(),
        reads: AtomicUsize::new(0),
    });
    let settings = AuthSettings {
        api_key_cache_ttl: CACHE_TTL,
        ..api_key_auth()
    };
    let http = checkpointd::outbound::client(None).unwrap();
    let auth = Authenticator::new(&settings, keys.clone(), &http)
        .await
        .unwrap();
    let (health, _) = tonic_health::server::health_reporter();
    let router = checkpointd::grpc::router(
        Services {
            engine: app.engine.clone(),
            retention: RetentionService::new(app.retention.clone()),
            tasks: None,
            notifications: None,
        },
        &ServerSettings::default(),
        health,
        AuthLayer::new(auth),
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
    (addr, keys)
}

/// LoadLatest as `token` on the server at `addr`: past the auth layer (the run has no
/// checkpoint, so `NOT_FOUND` is the answer an admitted call gets), or the refusal.
async fn load(addr: SocketAddr, token: &str) -> std::result::Result<(), tonic::Status> {
    let mut client = connect(addr).await;
    match load_with(&mut client, token).await {
        Err(status) if status.code() == tonic::Code::NotFound => Ok(()),
        other => other,
    }
}

async fn load_with(
    client: &mut checkpointd::proto::checkpoint_service_client::CheckpointServiceClient<
        tonic::transport::Channel,
    >,
    token: &str,
) -> std::result::Result<(), tonic::Status> {
    let request = LoadLatestRequest {
        run_id: "run-1".into(),
        ..Default::default()
    };
    client
        .load_latest(bearer(Some(token), None, request))
        .await
        .map(drop)
}

/// Sends `tokens(i)` for i in 0..count from [`SENDERS`] clients at once; each must be refused.
async fn flood(
    addr: SocketAddr,
    count: usize,
    token: impl Fn(usize) -> String + Clone + Send + 'static,
) {
    let client = connect(addr).await;
    let senders: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let mut client = client.clone();
            let token = token.clone();
            tokio::spawn(async move {
                for i in (sender..count).step_by(SENDERS) {
                    let status = load_with(&mut client, &token(i)).await.unwrap_err();
                    assert_unauthenticated(&status);
                }
            })
        })
        .collect();
    for sender in senders {
        sender.await.unwrap();
    }
}

/// `ckpt_<id>_<secret>` with a well-formed id no key has.
fn forged(i: usize) -> String {
    // Distinct for every i; 0xf0... keeps them clear of random ids in practice.
    format!("ckpt_f0{:014x}_{}", i, "ab".repeat(32))
}

async fn ten_thousand_forged_key_ids_cost_a_handful_of_database_reads(backend: Backend) {
    let app = spawn_with_auth(backend, api_key_auth()).await;
    let (addr, keys) = counted_server(&app).await;
    let (id, good) = make_key(&app, Some("acme"), Role::Agent).await;
    // A key made after the server started works on its first call.
    load(addr, &good).await.unwrap();

    let before = keys.reads.load(Ordering::SeqCst);
    let started = Instant::now();
    flood(addr, FORGED, forged).await;
    let elapsed = started.elapsed();
    let reads = keys.reads.load(Ordering::SeqCst) - before;
    // At most MISSES_PER_WINDOW reads per window the flood overlapped.
    let windows = elapsed.as_secs_f64() / WINDOW.as_secs_f64();
    let allowed = MISSES_PER_WINDOW as usize * (windows.floor() as usize + 2);
    eprintln!(
        "{backend:?}: {FORGED} forged key ids in {elapsed:?} read the key store {reads} times"
    );
    assert!(
        reads <= allowed,
        "{reads} key store reads for {FORGED} forged ids in {elapsed:?} (allowed {allowed})"
    );

    // The same forged ids again, now remembered: no read at all while they are.
    let before = keys.reads.load(Ordering::SeqCst);
    let started = Instant::now();
    flood(addr, 200, |i| forged(FORGED - 1 - i)).await;
    if started.elapsed() < WINDOW / 2 {
        assert_eq!(keys.reads.load(Ordering::SeqCst), before);
    }

    // A key made while the read budget is spent works within one window.
    let (_, fresh) = make_key(&app, Some("acme"), Role::Agent).await;
    let made = Instant::now();
    wait_until("the fresh key works", || async {
        load(addr, &fresh).await.is_ok()
    })
    .await;
    assert!(
        made.elapsed() < WINDOW + Duration::from_secs(2),
        "{:?}",
        made.elapsed()
    );

    // The known key is admitted from memory, yet revoking it refuses the next call.
    load(addr, &good).await.unwrap();
    assert!(app.keys.revoke_key(&id, SystemTime::now()).await.unwrap());
    assert_unauthenticated(&load(addr, &good).await.unwrap_err());
}

async fn a_known_id_is_refused_or_admitted_without_reading_the_database(backend: Backend) {
    let app = spawn_with_auth(backend, api_key_auth()).await;
    let (addr, keys) = counted_server(&app).await;
    let (id, good) = make_key(&app, Some("acme"), Role::Agent).await;
    load(addr, &good).await.unwrap();

    let before = keys.reads.load(Ordering::SeqCst);
    flood(addr, 1_000, move |i| format!("ckpt_{id}_{:064x}", i)).await;
    assert_eq!(
        keys.reads.load(Ordering::SeqCst),
        before,
        "wrong secrets read the store"
    );
    // The right secret is admitted from memory. On Postgres the notification of the key's
    // creation may arrive after the first call and drop it once; never more.
    for _ in 0..50 {
        load(addr, &good).await.unwrap();
    }
    let reads = keys.reads.load(Ordering::SeqCst) - before;
    assert!(reads <= 1, "{reads} reads for 50 calls of a known key");
}

/// Agents reconnecting to a restarted server all present a key the gate has not seen yet, at
/// once: more first calls than the window's reads may miss. None may be refused.
async fn a_fresh_key_is_served_on_many_first_calls_at_once(backend: Backend) {
    let app = spawn_with_auth(backend, api_key_auth()).await;
    let (addr, _keys) = counted_server(&app).await;
    let (_, good) = make_key(&app, Some("acme"), Role::Agent).await;
    let calls: Vec<_> = (0..SENDERS)
        .map(|_| {
            let good = good.clone();
            tokio::spawn(async move { load(addr, &good).await })
        })
        .collect();
    for call in calls {
        call.await
            .unwrap()
            .expect("a fresh key's first calls are all served");
    }
}
