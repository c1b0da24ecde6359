//! Answers draw on a budget as requests do: an answer whose body a client does not read holds
//! its share until its connection goes or `--answer-send-timeout` (30 s here; see
//! answer_deadline.rs) cuts it off. Two such answers fill their tenant's half of the budget,
//! and the tenant's next answer waits for room and is then refused as an overload, while
//! another tenant is still served.

use checkpointd::config::{AnswerLimits, ServerSettings};
use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::{ClientCapability, LoadLatestRequest, Message, SaveRequest};
use prost::Message as _;
use tonic::Code;
use tonic::codegen::{Bytes, http};
use tonic::transport::Channel;
use tonic_types::StatusExt;

use crate::memory_limits::raw_connection;
use crate::support::requests::save;
use crate::support::{Backend, for_tenant, spawn_app_with};

/// The answer budget of the test server: each tenant may hold half, each connection a quarter.
const BUDGET: usize = 1 << 20;

fn load() -> LoadLatestRequest {
    LoadLatestRequest {
        run_id: "run-1".into(),
        capabilities: vec![ClientCapability::PagedMessages as i32],
        ..Default::default()
    }
}

/// Saves a 2 MiB history for `tenant`: every answer of it is larger than any share.
pub(crate) async fn save_history(client: &mut CheckpointServiceClient<Channel>, tenant: &str) {
    let request = SaveRequest {
        messages: (0..2)
            .map(|i| Message {
                role: "user".into(),
                content: vec![i; 1 << 20],
            })
            .collect(),
        ..save("run-1", 1, b"{}")
    };
    client.save(for_tenant(tenant, request)).await.unwrap();
}

/// A LoadLatest for `tenant` on a connection of its own whose answer is never read: it stalls
/// on HTTP/2 flow control with its share of the answer budget held.
pub(crate) async fn stalled_load(
    addr: std::net::SocketAddr,
    tenant: &str,
) -> (
    h2::client::SendRequest<Bytes>,
    http::Response<h2::RecvStream>,
    h2::SendStream<Bytes>,
) {
    let mut raw = raw_connection(addr).await;
    let request = http::Request::post("/checkpoint.v1.CheckpointService/LoadLatest")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("x-tenant-id", tenant)
        .body(())
        .unwrap();
    let (response, mut body) = raw.send_request(request, false).unwrap();
    let encoded = load().encode_to_vec();
    let mut frame = vec![0];
    frame.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    frame.extend_from_slice(&encoded);
    body.send_data(Bytes::from(frame), true).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), 200);
    (raw, response, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_answers_hold_only_their_tenants_share_of_the_answer_budget() {
    let settings = ServerSettings {
        answers: AnswerLimits {
            max_inflight_bytes: BUDGET,
            ..AnswerLimits::default()
        },
        ..ServerSettings::default()
    };
    let app = spawn_app_with(Backend::Memory, settings).await;
    let mut client = app.client().await;
    save_history(&mut client, "hoarder").await;
    save_history(&mut client, "neighbour").await;

    let first = stalled_load(app.addr, "hoarder").await;
    let second = stalled_load(app.addr, "hoarder").await;

    let refused = match client.load_latest(for_tenant("hoarder", load())).await {
        Ok(_) => panic!("the tenant's third answer was served while two held its share"),
        Err(status) => status,
    };
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert_eq!(
        refused.get_details_error_info().unwrap().reason,
        "OVERLOADED"
    );
    assert!(
        refused.message().contains("tenant"),
        "{}",
        refused.message()
    );
    let served = client
        .load_latest(for_tenant("neighbour", load()))
        .await
        .expect("another tenant finds the rest of the budget")
        .into_inner();
    assert_eq!(served.checkpoint.unwrap().messages.len(), 2);

    // The stalled clients go away, and with them their shares.
    drop((first, second));
    let answer = client
        .load_latest(for_tenant("hoarder", load()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.checkpoint.unwrap().messages.len(), 2);
}
