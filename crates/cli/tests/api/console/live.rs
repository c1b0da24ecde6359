//! The console's live event streams over real HTTP: refused without a session, an Approve made
//! over gRPC arrives on the inbox stream, a new checkpoint on a run's stream, another tenant's
//! run is not found, and the stream ends with `signed-out` when the session expires.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use checkpointd::proto::ApproveRequest;
use checkpointd_core::domain::Role;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{console, console_app, session};
use crate::auth::{bearer, make_key, save_as, task_awaiting_approval};

/// An open event stream: the answer's head, then its body as it arrives.
struct Stream {
    socket: TcpStream,
    seen: String,
}

impl Stream {
    async fn open(addr: SocketAddr, path: &str, cookie: Option<&str>) -> Self {
        let mut socket = TcpStream::connect(addr).await.unwrap();
        let mut head =
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n");
        if let Some(cookie) = cookie {
            head.push_str(&format!("Cookie: {cookie}\r\n"));
        }
        head.push_str("\r\n");
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut stream = Self {
            socket,
            seen: String::new(),
        };
        stream.read_until("\r\n\r\n").await;
        stream
    }

    fn status(&self) -> u16 {
        self.seen[9..12].parse().unwrap()
    }

    /// Reads until `wanted` has arrived (within 10 s, else the test fails with what came).
    async fn read_until(&mut self, wanted: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut buffer = [0u8; 4096];
        while !self.seen.contains(wanted) {
            let read = tokio::time::timeout_at(deadline, self.socket.read(&mut buffer))
                .await
                .unwrap_or_else(|_| panic!("no {wanted:?} within 10 s; got {:?}", self.seen))
                .unwrap();
            assert!(read > 0, "closed before {wanted:?}; got {:?}", self.seen);
            self.seen
                .push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    }
}

fn now_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

#[tokio::test]
async fn the_event_streams_are_refused_without_a_session() {
    let app = console_app(Duration::from_secs(900)).await;
    let made_up = format!("checkpointd_console={}", "ab".repeat(32));
    for path in ["/events/inbox", "/events/runs/r1?after=0"] {
        for cookie in [None, Some(made_up.as_str())] {
            let stream = Stream::open(console(&app), path, cookie).await;
            assert_eq!(stream.status(), 401, "{path}: {}", stream.seen);
            assert!(!stream.seen.contains("text/event-stream"));
        }
    }
}

#[tokio::test]
async fn an_approval_made_over_grpc_arrives_on_the_open_inbox_stream() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let task = task_awaiting_approval(&app, &agent, "run-live").await;
    let cookie = session(&app, &operator).await;
    let path = format!("/events/inbox?since={}", now_millis());
    let mut stream = Stream::open(console(&app), &path, Some(&cookie)).await;
    assert_eq!(stream.status(), 200, "{}", stream.seen);
    assert!(stream.seen.contains("content-type: text/event-stream"));

    let approve = ApproveRequest {
        task_id: task.task_id.clone(),
        decided_by: String::new(),
        comment: "fine".into(),
    };
    let mut tasks = app.tasks().await;
    tasks
        .approve(bearer(Some(&operator), None, approve))
        .await
        .unwrap();
    stream
        .read_until(&format!("data: {}\n", task.task_id))
        .await;
    assert!(
        stream.seen.contains("event: task.approved\nid: "),
        "{}",
        stream.seen
    );
    // The request for approval was raised before the page's time, so it was not replayed.
    assert!(
        !stream.seen.contains("task.input_required"),
        "{}",
        stream.seen
    );
}

#[tokio::test]
async fn a_new_checkpoint_arrives_on_its_runs_stream_and_another_tenants_run_is_not_found() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, agent) = make_key(&app, Some("acme"), Role::Agent).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let (_, other) = make_key(&app, Some("globex"), Role::Agent).await;
    save_as(&app, &agent, None, "run-watched", 1).await.unwrap();
    save_as(&app, &other, None, "run-elsewhere", 1)
        .await
        .unwrap();
    let cookie = session(&app, &operator).await;

    let elsewhere = Stream::open(console(&app), "/events/runs/run-elsewhere", Some(&cookie)).await;
    assert_eq!(elsewhere.status(), 404, "{}", elsewhere.seen);

    let path = "/events/runs/run-watched?after=1";
    let mut stream = Stream::open(console(&app), path, Some(&cookie)).await;
    assert_eq!(stream.status(), 200, "{}", stream.seen);
    save_as(&app, &agent, None, "run-watched", 2).await.unwrap();
    stream
        .read_until("event: checkpoint\nid: 2\ndata: 2\n")
        .await;
    assert!(!stream.seen.contains("data: 1\n"), "{}", stream.seen);
}

#[tokio::test]
async fn an_open_stream_ends_with_signed_out_when_its_session_expires() {
    let app = console_app(Duration::from_secs(2)).await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let cookie = session(&app, &operator).await;
    let mut stream = Stream::open(console(&app), "/events/inbox", Some(&cookie)).await;
    assert_eq!(stream.status(), 200, "{}", stream.seen);
    stream.read_until("event: signed-out\n").await;
    let again = Stream::open(console(&app), "/events/inbox", Some(&cookie)).await;
    assert_eq!(again.status(), 401);
}
