//! An answer nobody reads is let go: a real `checkpointd serve` cuts off a load whose client
//! never opens HTTP/2 flow control once `--answer-send-timeout` passes, returns its share of
//! the answer budget at once (the tenant's own next load is served), counts it in
//! `checkpointd_answers_cut_off_total`, and the stream ends with an error, never a whole answer.

use std::time::Duration;

use crate::answer_budget::{save_history, stalled_load};
use crate::memory_limits::proc_status;
use crate::support::{ServerProcess, connect, for_tenant, wait_until};
use checkpointd::proto::{ClientCapability, LoadLatestRequest};

const MIB: u64 = 1 << 20;

/// The `checkpointd_answers_cut_off_total` counter on the admin port's `/metrics`.
async fn answers_cut_off(admin: std::net::SocketAddr) -> u64 {
    let (status, body) = crate::telemetry::http_get(admin, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    body.lines()
        .find(|line| line.starts_with("checkpointd_answers_cut_off_total"))
        .unwrap_or_else(|| panic!("no answers cut off counter in:\n{body}"))
        .rsplit_once(' ')
        .unwrap()
        .1
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_answer_is_cut_off_at_the_send_deadline_and_its_share_returned() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("deadline.db").display());
    // A 2 MiB budget: a tenant may hold 1 MiB, a connection 512 KiB, so two unread answers of
    // the 2 MiB history hold their tenant's whole share.
    let server = ServerProcess::start(
        &url,
        &[
            "--answer-send-timeout",
            "2s",
            "--max-inflight-answer-bytes",
            "2097152",
        ],
    );
    let mut client = connect(server.addr).await;
    save_history(&mut client, "hoarder").await;
    let idle = proc_status(server.pid(), "VmRSS");
    assert_eq!(answers_cut_off(server.admin_addr).await, 0);

    let (_first_conn, mut first, _first_send) = stalled_load(server.addr, "hoarder").await;
    let (_second_conn, _second, _second_send) = stalled_load(server.addr, "hoarder").await;
    let stalled = proc_status(server.pid(), "VmRSS");
    wait_until("both unread answers are cut off", || async {
        answers_cut_off(server.admin_addr).await >= 2
    })
    .await;
    let cut = proc_status(server.pid(), "VmRSS");

    // The share came back at the deadline: the tenant's own load is served, not OVERLOADED
    // (which it would be after waiting 5 s for room while the two held the share).
    let load = LoadLatestRequest {
        run_id: "run-1".into(),
        capabilities: vec![ClientCapability::PagedMessages as i32],
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let answer = client
        .load_latest(for_tenant("hoarder", load))
        .await
        .expect("the tenant's next load is served")
        .into_inner();
    assert_eq!(answer.checkpoint.unwrap().messages.len(), 2);
    let served_in = started.elapsed();
    assert!(
        served_in < Duration::from_secs(4),
        "waited {served_in:?} for room"
    );

    // The cut-off stream, once its client reads after all, ends with an error after what
    // HTTP/2 had already taken: never the whole answer.
    let body = first.body_mut();
    let mut received = 0;
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match body.data().await {
                Some(Ok(data)) => {
                    received += data.len();
                    let _ = body.flow_control().release_capacity(data.len());
                }
                Some(Err(error)) => break Err(error),
                None => break Ok(()),
            }
        }
    })
    .await
    .expect("the cut-off stream ends");
    assert!(
        ended.is_err(),
        "the cut-off stream ended cleanly after {received} bytes"
    );
    assert!((received as u64) < 2 * MIB, "received {received} bytes");
    eprintln!(
        "answer deadline: VmRSS idle {} MiB, two unread answers {} MiB, after cut-off {} MiB; \
         next load served in {served_in:?}; the cut stream gave {received} bytes then an error",
        idle / MIB,
        stalled / MIB,
        cut / MIB
    );
    assert!(
        cut < idle + 64 * MIB,
        "RSS {cut} after the cut-off, {idle} idle"
    );
}
