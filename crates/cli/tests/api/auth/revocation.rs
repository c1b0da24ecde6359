//! A revoked API key stops working on every server of the database within the stated bound
//! (docs/security.md, "Revocation and caching"), with two real `checkpointd serve` processes on
//! one Postgres schema: through the notification that `checkpointd keys revoke` sends, through
//! the cache TTL when no notification is sent at all (a hand edit of `revoked_at`), and through
//! the listener's resync when its connection is lost.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use checkpointd::proto::LoadLatestRequest;
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use tonic::{Code, Status};

use super::{assert_unauthenticated, bearer};
use crate::support::{PgSchema, ServerProcess, channel, requests, stdout_of, wait_until};

/// How long a notification may take from the revocation's commit to both servers refusing the
/// key; far below the TTL the servers run with, so only the notification can explain it.
const NOTIFICATION_BOUND: Duration = Duration::from_secs(3);
/// The TTL of the servers that must rely on it.
const SHORT_TTL: Duration = Duration::from_secs(2);
/// Time a call itself may add to a bound (a loaded 2-core machine, a debug build).
const CALL_GRACE: Duration = Duration::from_millis(750);

/// `checkpointd keys ...` on `url`; its stdout.
fn keys(url: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .arg("keys")
        .args(args)
        .args(["--database", url])
        .env_remove("CHECKPOINTD_DATABASE")
        .output()
        .expect("run checkpointd keys");
    stdout_of(&output)
}

/// The id part of a `ckpt_<id>_<secret>` token.
fn key_id(token: &str) -> &str {
    token
        .strip_prefix("ckpt_")
        .unwrap()
        .split_once('_')
        .unwrap()
        .0
}

/// LoadLatest of a run as `token`: admitted (found or not found), or the refusal.
async fn call(addr: SocketAddr, token: &str) -> Result<(), Status> {
    let mut client = CheckpointServiceClient::new(channel(addr).await);
    let request = LoadLatestRequest {
        run_id: "revoked-run".into(),
        ..Default::default()
    };
    match client.load_latest(bearer(Some(token), None, request)).await {
        Ok(_) => Ok(()),
        Err(status) if status.code() == Code::NotFound => Ok(()),
        Err(status) => Err(status),
    }
}

/// Calls `addr` as `token` until refused, failing if `bound` (after `since`) passes first;
/// then keeps calling for `then_for` and fails if the key is ever admitted again. How long
/// after `since` it was first refused.
async fn refused_within(
    addr: SocketAddr,
    token: &str,
    since: Instant,
    bound: Duration,
    then_for: Duration,
) -> Duration {
    loop {
        match call(addr, token).await {
            Ok(()) => {
                assert!(
                    since.elapsed() < bound + CALL_GRACE,
                    "{addr} still admits the revoked key {:?} after the revocation (bound {bound:?})",
                    since.elapsed()
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(status) => {
                assert_unauthenticated(&status);
                break;
            }
        }
    }
    let refused_after = since.elapsed();
    let refused_at = Instant::now();
    while refused_at.elapsed() < then_for {
        let status = call(addr, token)
            .await
            .expect_err("a revoked key worked again");
        assert_unauthenticated(&status);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    refused_after
}

/// Two servers on `url` with `args`, a key made by the CLI and used on both (a Save on one, a
/// load on the other, so both hold it in memory); the servers and the token.
async fn two_servers_holding_a_key(url: &str, args: &[&str]) -> ([ServerProcess; 2], String) {
    let servers = [
        ServerProcess::start(url, args),
        ServerProcess::start(url, args),
    ];
    let token = keys(url, &["create", "--tenant", "acme", "--role", "agent"])
        .trim()
        .to_owned();
    let mut first = CheckpointServiceClient::new(channel(servers[0].addr).await);
    first
        .save(bearer(
            Some(&token),
            None,
            requests::save("revoked-run", 1, b"{}"),
        ))
        .await
        .unwrap();
    for server in &servers {
        call(server.addr, &token).await.unwrap();
    }
    (servers, token)
}

#[tokio::test]
async fn a_key_revoked_with_the_cli_is_refused_by_every_server_within_the_notification_bound() {
    let schema = PgSchema::create().await;
    let url = schema.url();
    let (servers, token) =
        two_servers_holding_a_key(&url, &["--auth", "api-key", "--api-key-cache-ttl", "10m"]).await;

    // Counted from before the command starts: its commit comes somewhat later.
    let revoked = Instant::now();
    keys(&url, &["revoke", key_id(&token)]);
    let command_took = revoked.elapsed();
    let [first, second] = &servers;
    let then_for = Duration::from_secs(1);
    let refused_after = tokio::join!(
        refused_within(first.addr, &token, revoked, NOTIFICATION_BOUND, then_for),
        refused_within(second.addr, &token, revoked, NOTIFICATION_BOUND, then_for),
    );
    eprintln!(
        "refused {refused_after:?} after the revocation began ({command_took:?} in the command)"
    );
}

#[tokio::test]
async fn a_revocation_no_server_is_told_of_is_refused_everywhere_within_the_cache_ttl() {
    let schema = PgSchema::create().await;
    let url = schema.url();
    let ttl = format!("{}s", SHORT_TTL.as_secs());
    let (servers, token) =
        two_servers_holding_a_key(&url, &["--auth", "api-key", "--api-key-cache-ttl", &ttl]).await;

    // By hand, as a lost notification would leave it: no NOTIFY is sent.
    let revoked = Instant::now();
    schema
        .execute(&format!(
            "UPDATE api_keys SET revoked_at = now() WHERE id = '{}'",
            key_id(&token)
        ))
        .await;
    // Kept up past a second TTL, when the refusing read has itself expired.
    let [first, second] = &servers;
    let then_for = SHORT_TTL + CALL_GRACE;
    let refused_after = tokio::join!(
        refused_within(first.addr, &token, revoked, SHORT_TTL, then_for),
        refused_within(second.addr, &token, revoked, SHORT_TTL, then_for),
    );
    eprintln!("refused {refused_after:?} after the revocation");
}

/// Whether the listening connection of the servers named `application` is open; terminates
/// it when `terminate`.
async fn listener(application: &str, terminate: bool) -> bool {
    let client = checkpointd_testkit::connect_or_panic(&checkpointd_testkit::database_url()).await;
    let action = if terminate {
        "pg_terminate_backend(pid)"
    } else {
        "true"
    };
    let rows = client
        .query(
            &format!(
                "SELECT {action} FROM pg_stat_activity WHERE application_name = $1 \
                 AND query = 'LISTEN checkpointd_api_keys'"
            ),
            &[&application],
        )
        .await
        .unwrap();
    !rows.is_empty()
}

#[tokio::test]
async fn a_server_whose_listener_reconnects_forgets_every_cached_key() {
    let schema = PgSchema::create().await;
    let application = format!("keyresync{}", std::process::id());
    let url = format!("{}&application_name={application}", schema.url());
    // Made before the server starts, so no late notification of its creation can empty the
    // cache behind the test's back.
    let token = keys(
        &schema.url(),
        &["create", "--tenant", "acme", "--role", "agent"],
    )
    .trim()
    .to_owned();
    let server = ServerProcess::start(&url, &["--auth", "api-key", "--api-key-cache-ttl", "10m"]);
    wait_until("the server listens", || listener(&application, false)).await;
    call(server.addr, &token).await.unwrap();

    // Revoked by hand, so no notification: the cached key is still admitted (the TTL is long).
    schema
        .execute(&format!(
            "UPDATE api_keys SET revoked_at = now() WHERE id = '{}'",
            key_id(&token)
        ))
        .await;
    call(server.addr, &token)
        .await
        .expect("a cached key is admitted until something tells the server");

    // The listener's connection is lost; on reconnecting it drops everything cached.
    let cut = Instant::now();
    assert!(listener(&application, true).await);
    refused_within(
        server.addr,
        &token,
        cut,
        Duration::from_secs(5),
        Duration::from_secs(1),
    )
    .await;
}
