//! Every string field a caller fills gets the same answer on every backend for a NUL byte,
//! bytes that are not UTF-8, and an overlong value: `INVALID_ARGUMENT` naming the field (a
//! task's error text alone is cut, not refused, when long). Bodies that are not protobuf at
//! all are `INVALID_ARGUMENT` too, and bodies far above the size limit `RESOURCE_EXHAUSTED`.

use checkpointd::config::ServerSettings;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{
    ApproveRequest, ClaimRequest, EnqueueRequest, FailRequest, GetRequest, LoadLatestRequest,
    RecordToolResultRequest, RequestApprovalRequest, SaveRequest, Task, TaskState,
};
use prost::bytes::{Buf, BufMut};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::support::requests::{message, save, tool};
use crate::support::{Backend, spawn_app_with};

/// Above the 64 KiB text limit, so overlong text is judged as text, not as request size.
const LIMIT: usize = 256 * 1024;
const SAVE: &str = "/checkpoint.v1.CheckpointService/Save";
const RECORD: &str = "/checkpoint.v1.CheckpointService/RecordToolResult";
const ENQUEUE: &str = "/checkpoint.v1.TaskService/Enqueue";
const CLAIM: &str = "/checkpoint.v1.TaskService/Claim";
const FAIL: &str = "/checkpoint.v1.TaskService/Fail";
const APPROVE: &str = "/checkpoint.v1.TaskService/Approve";

/// A request body sent as is, so a test can send what no typed client would.
#[derive(Clone, Debug, Default)]
pub(crate) struct RawBody(pub(crate) Vec<u8>);

impl prost::Message for RawBody {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.0);
    }

    fn merge_field(
        &mut self,
        _tag: u32,
        _wire_type: prost::encoding::WireType,
        _buf: &mut impl Buf,
        _ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        unreachable!("RawBody is only ever sent")
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// A length-delimited field: a string, bytes or an embedded message.
pub(crate) fn field(tag: u32, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::bytes::encode(tag, &value.to_vec(), &mut out);
    out
}

const NOT_UTF8: &[u8] = b"ok\xff\xfe";

/// One unary call with `body` as the request, decoding the answer as `R`.
pub(crate) async fn raw_call<R>(
    channel: &Channel,
    path: &'static str,
    body: Vec<u8>,
) -> Result<R, Status>
where
    R: prost::Message + Default + Send + 'static,
{
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.expect("the channel is ready");
    let codec = tonic_prost::ProstCodec::<RawBody, R>::default();
    grpc.unary(
        tonic::Request::new(RawBody(body)),
        PathAndQuery::from_static(path),
        codec,
    )
    .await
    .map(tonic::Response::into_inner)
}

fn assert_refused(name: &str, outcome: Result<(), Status>, code: Code, field: &str) {
    let status = outcome.expect_err(name);
    assert_eq!(status.code(), code, "{name}: {status:?}");
    assert!(
        status.message().contains(field),
        "{name}: the message does not name {field}: {status:?}"
    );
}

async fn string_fields_refuse_nul_invalid_and_overlong_values(backend: Backend) {
    let app = spawn_app_with(
        backend,
        ServerSettings {
            max_request_bytes: LIMIT,
            ..ServerSettings::default()
        },
    )
    .await;
    let channel = app.channel().await;
    let mut client = app.client().await;
    let mut tasks = app.tasks().await;
    let overlong = "x".repeat(257);
    let huge_text = "x".repeat(64 * 1024 + 1);
    let with_metadata = |key: &str, value: &str| SaveRequest {
        metadata: [(key.to_owned(), value.to_owned())].into(),
        ..save("run-s", 1, b"{}")
    };

    let checkpoint_cases: Vec<(&str, SaveRequest, &str)> = vec![
        ("nul in run id", save("a\0b", 1, b"{}"), "run_id"),
        (
            "nul in content type",
            SaveRequest {
                content_type: "application/json\0".into(),
                ..save("run-s", 1, b"{}")
            },
            "content_type",
        ),
        (
            "control character in content type",
            SaveRequest {
                content_type: "text\nplain".into(),
                ..save("run-s", 1, b"{}")
            },
            "content_type",
        ),
        (
            "nul in a message role",
            SaveRequest {
                messages: vec![message("us\0er", "hi")],
                ..save("run-s", 1, b"{}")
            },
            "role",
        ),
        (
            "overlong message role",
            SaveRequest {
                messages: vec![message(&overlong, "hi")],
                ..save("run-s", 1, b"{}")
            },
            "role",
        ),
        (
            "nul in a metadata key",
            with_metadata("k\0", "v"),
            "metadata key",
        ),
        (
            "overlong metadata key",
            with_metadata(&overlong, "v"),
            "metadata key",
        ),
        (
            "nul in a metadata value",
            with_metadata("k", "v\0"),
            "metadata value",
        ),
        (
            "overlong metadata value",
            with_metadata("k", &huge_text),
            "metadata value",
        ),
        (
            "nul in a checksum",
            SaveRequest {
                checksum: Some(format!("{}\0", "0".repeat(63))),
                ..save("run-s", 1, b"{}")
            },
            "checksum",
        ),
    ];
    for (name, request, field) in checkpoint_cases {
        let outcome = client.save(request).await.map(drop);
        assert_refused(name, outcome, Code::InvalidArgument, field);
    }
    let tool_cases: Vec<(&str, RecordToolResultRequest, &str)> = vec![
        ("nul in a call id", tool("run-s", "c\0", 1, "x"), "call_id"),
        (
            "nul in a tool name",
            RecordToolResultRequest {
                tool_name: "send\0email".into(),
                ..tool("run-s", "c1", 1, "x")
            },
            "tool_name",
        ),
        (
            "overlong tool name",
            RecordToolResultRequest {
                tool_name: overlong.clone(),
                ..tool("run-s", "c1", 1, "x")
            },
            "tool_name",
        ),
    ];
    for (name, request, field) in tool_cases {
        let outcome = client.record_tool_result(request).await.map(drop);
        assert_refused(name, outcome, Code::InvalidArgument, field);
    }
    let enqueue_nul = tasks
        .enqueue(EnqueueRequest {
            run_id: "run-t".into(),
            idempotency_key: "key\0".into(),
            ..EnqueueRequest::default()
        })
        .await
        .map(drop);
    assert_refused(
        "nul in an idempotency key",
        enqueue_nul,
        Code::InvalidArgument,
        "idempotency_key",
    );
    let claim_nul = tasks
        .claim(ClaimRequest {
            worker_id: "w\0".into(),
            ..ClaimRequest::default()
        })
        .await
        .map(drop);
    assert_refused(
        "nul in a worker id",
        claim_nul,
        Code::InvalidArgument,
        "worker_id",
    );

    // Bytes that are not UTF-8 in any string field: the body is not a valid message.
    let not_utf8: Vec<(&str, &'static str, Vec<u8>)> = vec![
        ("run id", SAVE, field(1, NOT_UTF8)),
        ("content type", SAVE, field(3, NOT_UTF8)),
        ("message role", SAVE, field(5, &field(1, NOT_UTF8))),
        (
            "metadata key",
            SAVE,
            field(7, &[field(1, NOT_UTF8), field(2, b"v")].concat()),
        ),
        (
            "metadata value",
            SAVE,
            field(7, &[field(1, b"k"), field(2, NOT_UTF8)].concat()),
        ),
        ("checksum", SAVE, field(9, NOT_UTF8)),
        ("call id", RECORD, field(2, NOT_UTF8)),
        ("tool name", RECORD, field(3, NOT_UTF8)),
        ("idempotency key", ENQUEUE, field(3, NOT_UTF8)),
        ("worker id", CLAIM, field(1, NOT_UTF8)),
        ("error text", FAIL, field(3, NOT_UTF8)),
        ("comment", APPROVE, field(3, NOT_UTF8)),
    ];
    for (name, path, body) in not_utf8 {
        let outcome = raw_call::<()>(&channel, path, body).await;
        let status = outcome.expect_err(name);
        assert_eq!(status.code(), Code::InvalidArgument, "{name}: {status:?}");
    }
    let garbage = raw_call::<()>(&channel, SAVE, vec![0xff; 16]).await;
    assert_eq!(garbage.unwrap_err().code(), Code::InvalidArgument);
    // Beyond what tonic decodes at all (twice the limit, and at least 1 MiB over it).
    let far_too_large =
        raw_call::<()>(&channel, SAVE, field(4, &vec![7; 2 * LIMIT + (2 << 20)])).await;
    assert_eq!(far_too_large.unwrap_err().code(), Code::ResourceExhausted);

    // Nothing above stored a checkpoint, and the server still answers.
    let unknown = client
        .load_latest(LoadLatestRequest {
            run_id: "run-s".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
    client.save(save("run-s", 1, b"{}")).await.unwrap();
}

async fn claim_one(tasks: &mut TaskServiceClient<Channel>) -> Task {
    let mut claimed = tasks
        .claim(ClaimRequest {
            worker_id: "w".into(),
            ..ClaimRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(claimed.len(), 1, "one task to claim");
    claimed.remove(0)
}

async fn task_text_is_judged_before_any_transition(backend: Backend) {
    let app = spawn_app_with(backend, ServerSettings::default()).await;
    let mut tasks = app.tasks().await;
    let huge_text = "x".repeat(64 * 1024 + 1);
    // A running task, then one awaiting approval: bad text changes neither.
    let enqueued = tasks
        .enqueue(EnqueueRequest {
            run_id: "run-t".into(),
            ..EnqueueRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    let claimed = claim_one(&mut tasks).await;
    assert_eq!(claimed.task_id, enqueued.task_id);
    let fail = |error: &str| FailRequest {
        task_id: claimed.task_id.clone(),
        attempt: claimed.attempt,
        error: error.to_owned(),
        ..FailRequest::default()
    };
    let fail_nul = tasks.fail(fail("boom\0")).await.map(drop);
    assert_refused("nul in an error", fail_nul, Code::InvalidArgument, "error");
    let approval_nul = tasks
        .request_approval(RequestApprovalRequest {
            task_id: claimed.task_id.clone(),
            attempt: claimed.attempt,
            action: "deploy\0".into(),
            ..RequestApprovalRequest::default()
        })
        .await
        .map(drop);
    assert_refused(
        "nul in an action",
        approval_nul,
        Code::InvalidArgument,
        "action",
    );
    tasks
        .request_approval(RequestApprovalRequest {
            task_id: claimed.task_id.clone(),
            attempt: claimed.attempt,
            action: "deploy".into(),
            ..RequestApprovalRequest::default()
        })
        .await
        .expect("a clean approval request is accepted");
    let approve = |decided_by: &str, comment: &str| ApproveRequest {
        task_id: claimed.task_id.clone(),
        decided_by: decided_by.to_owned(),
        comment: comment.to_owned(),
    };
    let cases = [
        ("nul in a comment", approve("alice", "ok\0"), "comment"),
        ("overlong comment", approve("alice", &huge_text), "comment"),
        ("nul in an approver", approve("al\0ice", "ok"), "decided_by"),
    ];
    for (name, request, field) in cases {
        let outcome = tasks.approve(request).await.map(drop);
        assert_refused(name, outcome, Code::InvalidArgument, field);
    }
    let waiting = tasks
        .get(GetRequest {
            task_id: claimed.task_id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(waiting.state, TaskState::InputRequired as i32);
    assert!(waiting.last_error.is_empty());

    // A long error text is no error: the queue keeps its first 8 KiB, on every backend.
    tasks
        .approve(approve("alice", "line 1\nline 2"))
        .await
        .unwrap();
    let again = claim_one(&mut tasks).await;
    let failed = tasks
        .fail(FailRequest {
            task_id: again.task_id.clone(),
            attempt: again.attempt,
            error: huge_text.clone(),
            ..FailRequest::default()
        })
        .await
        .expect("a long error text is cut, not refused")
        .into_inner()
        .task
        .unwrap();
    assert_eq!(failed.last_error.len(), 8 * 1024);
}

crate::for_each_backend!(
    string_fields_refuse_nul_invalid_and_overlong_values,
    task_text_is_judged_before_any_transition,
);
