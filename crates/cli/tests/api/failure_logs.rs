//! While the database is down every request fails the same way; the log says so a few times,
//! not once per request.

use std::sync::{Arc, Mutex};

use tonic::Code;
use tracing_subscriber::fmt::MakeWriter;

use crate::health::serve_through_proxy;
use crate::support::requests::save;

/// Log output gathered in memory.
#[derive(Clone, Default)]
struct CapturedLogs(Arc<Mutex<Vec<u8>>>);

impl CapturedLogs {
    fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap();
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl std::io::Write for CapturedLogs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for CapturedLogs {
    type Writer = Self;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

const FAILING_REQUESTS: i64 = 200;

#[tokio::test]
async fn many_requests_failing_while_postgres_is_down_log_a_few_lines() {
    let logs = CapturedLogs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .finish();
    // The test runtime has one thread, so the server's tasks log to this subscriber too.
    let _logging = tracing::subscriber::set_default(subscriber);
    let (app, mut proxy, schema) = serve_through_proxy().await;
    let mut client = app.client().await;
    client.save(save("run-1", 1, b"{}")).await.unwrap();

    proxy.cut().await;
    for step in 2..2 + FAILING_REQUESTS {
        let error = client.save(save("run-1", step, b"{}")).await.unwrap_err();
        assert_eq!(error.code(), Code::Unavailable, "{error:?}");
    }
    let lines = logs.lines();
    // The requests' errors are logged by `checkpointd::grpc::status`; the background jobs (pruner,
    // reaper, queue-depth poll) log their own failed pass once per interval, not per request.
    let unavailable = lines
        .iter()
        .filter(|line| {
            line.contains("checkpointd::grpc::status") && line.contains("storage unavailable")
        })
        .count();
    // One line per cause (a closed connection, then refused reconnects) at most; other tests
    // in this process may have logged the same causes already, which leaves fewer.
    assert!(
        unavailable <= 3,
        "{unavailable} lines for {FAILING_REQUESTS} failures:\n{}",
        lines.join("\n")
    );
    // The pool's own lines come once per pooled connection (four in tests), not per request.
    assert!(
        lines.len() <= 20,
        "{} warning lines for {FAILING_REQUESTS} failures:\n{}",
        lines.len(),
        lines.join("\n")
    );

    proxy.restore().await;
    crate::support::wait_until("postgres answers again", || {
        let mut client = client.clone();
        async move { client.save(save("run-1", 2, b"{}")).await.is_ok() }
    })
    .await;
    drop(schema);
}
