//! Answers draw on a budget as requests do: an answer whose body a client does not read holds
//! its share until the connection goes, and the next large answer waits for room and is then
//! refused as an overload, instead of the server holding both at once.

use checkpointd::grpc::{AnswerLimits, ServerSettings};
use checkpointd::proto::{ClientCapability, LoadLatestRequest, Message, SaveRequest};
use prost::Message as _;
use tonic::Code;
use tonic::codegen::{Bytes, http};
use tonic_types::StatusExt;

use crate::memory_limits::raw_connection;
use crate::support::requests::save;
use crate::support::{Backend, spawn_app_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_answer_holds_its_share_and_the_next_waits_then_is_overloaded() {
    let settings = ServerSettings {
        answers: AnswerLimits {
            max_inflight_bytes: 1 << 20,
            ..AnswerLimits::default()
        },
        ..ServerSettings::default()
    };
    let app = spawn_app_with(Backend::Memory, settings).await;
    let mut client = app.client().await;
    client
        .save(SaveRequest {
            messages: (0..2)
                .map(|i| Message {
                    role: "user".into(),
                    content: vec![i; 1 << 20],
                })
                .collect(),
            ..save("run-1", 1, b"{}")
        })
        .await
        .unwrap();
    let load = LoadLatestRequest {
        run_id: "run-1".into(),
        capabilities: vec![ClientCapability::PagedMessages as i32],
        ..Default::default()
    };

    // A client that asks and never reads: the 2 MiB answer stalls on HTTP/2 flow control.
    let mut raw = raw_connection(app.addr).await;
    let request = http::Request::post("/checkpoint.v1.CheckpointService/LoadLatest")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("x-tenant-id", "default")
        .body(())
        .unwrap();
    let (response, mut body) = raw.send_request(request, false).unwrap();
    let encoded = load.encode_to_vec();
    let mut frame = vec![0];
    frame.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    frame.extend_from_slice(&encoded);
    body.send_data(Bytes::from(frame), true).unwrap();
    let stalled = response.await.unwrap();
    assert_eq!(stalled.status(), 200);

    let refused = match client.load_latest(load.clone()).await {
        Ok(_) => panic!("a second answer was served while the first held the whole budget"),
        Err(status) => status,
    };
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert_eq!(
        refused.get_details_error_info().unwrap().reason,
        "OVERLOADED"
    );

    // The stalled client goes away, and with it its share.
    drop((stalled, body, raw));
    let answer = client.load_latest(load).await.unwrap().into_inner();
    assert_eq!(answer.checkpoint.unwrap().messages.len(), 2);
}
