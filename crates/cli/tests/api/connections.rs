//! Client connections are bounded: a connection that never sends a request is closed after
//! the configured timeouts, the server pings and advertises its stream cap, and connections
//! beyond the cap are closed at once.

use std::time::{Duration, Instant};

use checkpointd::config::{ConnectionSettings, ServerSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::Channel;

use crate::support::requests::save;
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;

use crate::support::{Backend, ServerProcess, TestApp, spawn_app_with, wait_until};

/// The HTTP/2 connection preface's magic, and an empty SETTINGS frame that completes it.
const MAGIC: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const EMPTY_SETTINGS: [u8; 9] = [0, 0, 0, 4, 0, 0, 0, 0, 0];
const FRAME_SETTINGS: u8 = 0x4;
const FRAME_PING: u8 = 0x6;
const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;

/// Longer than any timeout these tests configure: a connection still open then is a failure.
const NEVER: Duration = Duration::from_secs(10);

async fn serve(connections: ConnectionSettings) -> TestApp {
    spawn_app_with(
        Backend::Memory,
        ServerSettings {
            connections,
            ..ServerSettings::default()
        },
    )
    .await
}

/// Everything the server sends until it closes the connection, and how long that took.
async fn read_until_closed(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let outcome = tokio::time::timeout(NEVER, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(outcome.is_ok(), "the server kept the connection open");
    (received, started.elapsed())
}

/// The HTTP/2 frames in `bytes`, as (type, flags, payload).
fn frames(mut bytes: &[u8]) -> Vec<(u8, u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while bytes.len() >= 9 {
        let length = u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]) as usize;
        let end = (9 + length).min(bytes.len());
        frames.push((bytes[3], bytes[4], bytes[9..end].to_vec()));
        bytes = &bytes[end..];
    }
    frames
}

async fn raw_connection(app: &TestApp, send: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(app.addr).await.unwrap();
    stream.write_all(send).await.unwrap();
    stream
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_read_timeout() {
    let app = serve(ConnectionSettings {
        header_read_timeout: Duration::from_millis(300),
        ..ConnectionSettings::default()
    })
    .await;
    let mut silent = raw_connection(&app, b"").await;
    let (_, after) = read_until_closed(&mut silent).await;
    assert!(
        after >= Duration::from_millis(250),
        "closed too early: {after:?}"
    );
}

#[tokio::test]
async fn a_connection_that_sends_only_the_preface_magic_is_closed_after_the_header_read_timeout() {
    let app = serve(ConnectionSettings {
        header_read_timeout: Duration::from_millis(300),
        ..ConnectionSettings::default()
    })
    .await;
    let mut half_open = raw_connection(&app, MAGIC).await;
    let (_, after) = read_until_closed(&mut half_open).await;
    assert!(
        after >= Duration::from_millis(250),
        "closed too early: {after:?}"
    );
}

#[tokio::test]
async fn a_connection_that_starts_no_call_is_closed_after_the_idle_timeout() {
    let app = serve(ConnectionSettings {
        header_read_timeout: Duration::from_millis(200),
        idle_timeout: Duration::from_millis(800),
        keepalive_interval: Duration::ZERO,
        ..ConnectionSettings::default()
    })
    .await;
    let mut idle = raw_connection(&app, &[MAGIC, &EMPTY_SETTINGS].concat()).await;
    let (received, after) = read_until_closed(&mut idle).await;
    assert!(
        frames(&received).iter().any(|f| f.0 == FRAME_SETTINGS),
        "the handshake completed"
    );
    // Past the header read timeout: it was the idle timeout that closed it.
    assert!(
        after >= Duration::from_millis(700),
        "closed too early: {after:?}"
    );
}

#[tokio::test]
async fn a_client_whose_idle_connection_was_closed_reconnects_on_its_next_call() {
    let app = serve(ConnectionSettings {
        idle_timeout: Duration::from_millis(200),
        ..ConnectionSettings::default()
    })
    .await;
    let mut client = app.client().await;
    client.save(save("run-1", 1, b"{}")).await.unwrap();
    // Real time must pass for the server's idle timeout to close the connection.
    tokio::time::sleep(Duration::from_millis(800)).await;
    client.save(save("run-1", 2, b"{}")).await.unwrap();
}

#[tokio::test]
async fn the_server_pings_and_closes_a_connection_that_does_not_answer() {
    let app = serve(ConnectionSettings {
        header_read_timeout: Duration::ZERO,
        idle_timeout: Duration::ZERO,
        keepalive_interval: Duration::from_millis(200),
        keepalive_timeout: Duration::from_millis(200),
        ..ConnectionSettings::default()
    })
    .await;
    let mut mute = raw_connection(&app, &[MAGIC, &EMPTY_SETTINGS].concat()).await;
    let (received, _) = read_until_closed(&mut mute).await;
    let pings = frames(&received)
        .into_iter()
        .filter(|(kind, flags, _)| *kind == FRAME_PING && flags & 0x1 == 0)
        .count();
    assert!(
        pings >= 1,
        "no ping before the close: {:?}",
        frames(&received)
    );
}

#[tokio::test]
async fn the_server_advertises_its_cap_on_concurrent_streams() {
    let app = serve(ConnectionSettings {
        max_concurrent_streams: 7,
        header_read_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(300),
        ..ConnectionSettings::default()
    })
    .await;
    let mut stream = raw_connection(&app, &[MAGIC, &EMPTY_SETTINGS].concat()).await;
    let (received, _) = read_until_closed(&mut stream).await;
    let (_, _, settings) = frames(&received)
        .into_iter()
        .find(|(kind, flags, _)| *kind == FRAME_SETTINGS && flags & 0x1 == 0)
        .expect("the server's SETTINGS frame");
    let advertised: Vec<(u16, u32)> = settings
        .chunks_exact(6)
        .map(|pair| {
            (
                u16::from_be_bytes([pair[0], pair[1]]),
                u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]),
            )
        })
        .collect();
    assert!(
        advertised.contains(&(SETTINGS_MAX_CONCURRENT_STREAMS, 7)),
        "{advertised:?}"
    );
}

#[tokio::test]
async fn connections_beyond_the_cap_are_closed_until_one_closes() {
    let app = serve(ConnectionSettings {
        max_connections: 2,
        ..ConnectionSettings::default()
    })
    .await;
    let handshake = [MAGIC, &EMPTY_SETTINGS].concat();
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = raw_connection(&app, &handshake).await;
        // The server's first frame proves the connection holds a slot.
        let mut header = [0u8; 9];
        stream.read_exact(&mut header).await.unwrap();
        held.push(stream);
    }
    let mut extra = raw_connection(&app, &handshake).await;
    let (received, after) = read_until_closed(&mut extra).await;
    assert!(received.is_empty(), "the extra connection was served");
    assert!(
        after < Duration::from_secs(5),
        "closed only after {after:?}"
    );

    drop(held.pop());
    let addr = app.addr;
    wait_until("a freed slot takes a client again", || async move {
        let Ok(channel) = Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
        else {
            return false;
        };
        let mut client = CheckpointServiceClient::new(channel);
        client.save(save("run-1", 1, b"{}")).await.is_ok()
    })
    .await;
}

/// User plus system CPU time of a process so far, in clock ticks (1/100 s on Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

async fn health_answers(addr: std::net::SocketAddr) -> bool {
    let attempt = async {
        let channel = Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .ok()?;
        tonic_health::pb::health_client::HealthClient::new(channel)
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await
            .ok()
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(1), attempt).await,
        Ok(Some(_))
    )
}

#[tokio::test]
async fn a_server_out_of_file_descriptors_stays_idle_and_answers_once_connections_close() {
    let server = ServerProcess::start("memory://", &["--header-read-timeout", "60s"]);
    let limited = std::process::Command::new("prlimit")
        .args(["--pid", &server.pid().to_string(), "--nofile=64:64"])
        .status()
        .expect("run prlimit");
    assert!(limited.success(), "prlimit failed");
    assert!(
        health_answers(server.addr).await,
        "serving before the flood"
    );

    // More connections than descriptors: the rest wait in the listen backlog, and every
    // accept fails with EMFILE until some close.
    let mut flood = Vec::new();
    for _ in 0..100 {
        flood.push(TcpStream::connect(server.addr).await.unwrap());
    }
    let before = cpu_ticks(server.pid());
    // A measuring window, not a synchronisation: how much CPU the starved server burns.
    let window = Duration::from_secs(2);
    tokio::time::sleep(window).await;
    let burnt = cpu_ticks(server.pid()) - before;
    // A retry loop without back-off burns the whole window (200 ticks); allow a tenth.
    assert!(
        burnt <= 20,
        "{burnt} ticks of CPU in {window:?} while starved of descriptors"
    );

    drop(flood);
    let addr = server.addr;
    wait_until("health answers again", || health_answers(addr)).await;
}
