//! Every RPC of every service, read from the descriptor set, called by every role and by no
//! credential: the role table as the wire shows it. A method added to the protos without a row
//! here fails this test, and the server refuses it to everyone until its table names it.

use std::collections::BTreeMap;

use checkpointd::proto::FILE_DESCRIPTOR_SET;
use checkpointd_core::domain::Role;
use prost::Message as _;
use prost_types::FileDescriptorSet;
use tonic::Code;
use tonic::client::Grpc;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic_prost::ProstCodec;

use super::{api_key_auth, bearer, make_key, spawn_with_auth};
use crate::support::{Backend, TestApp};

/// The least role each method needs; written out by hand, apart from the server's table, so
/// that a change to either shows here.
fn expected() -> BTreeMap<&'static str, Role> {
    use Role::{Admin, Agent, Operator};
    BTreeMap::from([
        ("/checkpoint.v1.CheckpointService/Save", Agent),
        ("/checkpoint.v1.CheckpointService/LoadLatest", Agent),
        ("/checkpoint.v1.CheckpointService/LoadAtStep", Agent),
        ("/checkpoint.v1.CheckpointService/Validate", Agent),
        ("/checkpoint.v1.CheckpointService/Resume", Agent),
        ("/checkpoint.v1.CheckpointService/RecordToolResult", Agent),
        ("/checkpoint.v1.CheckpointService/RecordToolResults", Agent),
        ("/checkpoint.v1.CheckpointService/RecordToolIntent", Agent),
        ("/checkpoint.v1.CheckpointService/GetJournal", Agent),
        ("/checkpoint.v1.CheckpointService/ListCheckpoints", Agent),
        ("/checkpoint.v1.CheckpointService/GetRun", Agent),
        ("/checkpoint.v1.CheckpointService/ListRuns", Agent),
        ("/checkpoint.v1.CheckpointService/RepairJournal", Operator),
        ("/checkpoint.v1.CheckpointService/DeleteRun", Operator),
        ("/checkpoint.v1.CheckpointService/DeleteCheckpoints", Agent),
        ("/checkpoint.v1.CheckpointService/SetRetention", Operator),
        ("/checkpoint.v1.CheckpointService/PinCheckpoint", Operator),
        ("/checkpoint.v1.CheckpointService/UnpinCheckpoint", Operator),
        ("/checkpoint.v1.CheckpointService/ValidateTenant", Operator),
        ("/checkpoint.v1.TaskService/Enqueue", Agent),
        ("/checkpoint.v1.TaskService/Claim", Agent),
        ("/checkpoint.v1.TaskService/Heartbeat", Agent),
        ("/checkpoint.v1.TaskService/Complete", Agent),
        ("/checkpoint.v1.TaskService/Fail", Agent),
        ("/checkpoint.v1.TaskService/Release", Agent),
        ("/checkpoint.v1.TaskService/RequestApproval", Agent),
        ("/checkpoint.v1.TaskService/Get", Agent),
        ("/checkpoint.v1.TaskService/List", Agent),
        ("/checkpoint.v1.TaskService/Approve", Operator),
        ("/checkpoint.v1.TaskService/Reject", Operator),
        ("/checkpoint.v1.TaskService/ResumeTask", Operator),
        ("/checkpoint.v1.TaskService/Cancel", Operator),
        ("/checkpoint.v1.TaskService/Requeue", Operator),
        (
            "/checkpoint.v1.NotificationService/CreateWebhookEndpoint",
            Admin,
        ),
        (
            "/checkpoint.v1.NotificationService/ListWebhookEndpoints",
            Admin,
        ),
        (
            "/checkpoint.v1.NotificationService/DeleteWebhookEndpoint",
            Admin,
        ),
        (
            "/checkpoint.v1.NotificationService/ListWebhookDeliveries",
            Admin,
        ),
        ("/checkpoint.v1.NotificationService/WatchTasks", Agent),
        ("/checkpoint.v1.NotificationService/WatchRun", Agent),
    ])
}

/// How long a streaming call that was admitted is given to answer or fail before it counts
/// as open (a watch with nothing to tell).
const WATCH_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);

/// Every method path of the checkpoint protos, and whether it streams its answer.
fn methods() -> Vec<(String, bool)> {
    let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap();
    let mut methods = Vec::new();
    for file in set.file {
        let package = file.package().to_owned();
        for service in file.service {
            let name = service.name().to_owned();
            for method in service.method {
                methods.push((
                    format!("/{package}.{name}/{}", method.name()),
                    method.server_streaming(),
                ));
            }
        }
    }
    methods
}

/// Calls `path` with an empty request message as `token`; the code of the answer.
async fn call(channel: Channel, path: &str, streaming: bool, token: Option<&str>) -> Code {
    let mut grpc = Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path = PathAndQuery::try_from(path).unwrap();
    let codec = ProstCodec::<(), ()>::default();
    let request = bearer(token, None, ());
    let outcome = if streaming {
        match grpc.server_streaming(request, path, codec).await {
            // A watch admitted with nothing to tell stays open: admitted all the same.
            Ok(response) => {
                let mut stream = response.into_inner();
                tokio::time::timeout(WATCH_PATIENCE, stream.message())
                    .await
                    .map_or(Ok(()), |first| first.map(drop))
            }
            Err(status) => Err(status),
        }
    } else {
        grpc.unary(request, path, codec).await.map(drop)
    };
    outcome.err().map_or(Code::Ok, |status| status.code())
}

async fn walk(app: &TestApp, token: Option<&str>, role: Option<Role>) {
    let expected = expected();
    let channel = app.channel().await;
    for (path, streaming) in methods() {
        let needed = *expected
            .get(path.as_str())
            .unwrap_or_else(|| panic!("{path} is missing from the role table test"));
        let code = call(channel.clone(), &path, streaming, token).await;
        match role {
            None => assert_eq!(code, Code::Unauthenticated, "{path} without a credential"),
            Some(role) if role < needed => {
                assert_eq!(code, Code::PermissionDenied, "{path} as {role}")
            }
            Some(role) => assert!(
                !matches!(code, Code::Unauthenticated | Code::PermissionDenied),
                "{path} as {role} got {code:?}"
            ),
        }
    }
}

#[tokio::test]
async fn every_rpc_answers_each_role_as_the_table_says() {
    let app = spawn_with_auth(Backend::Memory, api_key_auth()).await;
    let described: Vec<String> = methods().into_iter().map(|(path, _)| path).collect();
    for path in expected().keys() {
        assert!(described.iter().any(|d| d == path), "{path} is no RPC");
    }
    walk(&app, None, None).await;
    for role in [Role::Agent, Role::Operator, Role::Admin] {
        let tenant = (role != Role::Admin).then_some("acme");
        let (_, token) = make_key(&app, tenant, role).await;
        walk(&app, Some(&token), Some(role)).await;
    }
    // Probes stay open: health answers without a credential.
    let mut health = tonic_health::pb::health_client::HealthClient::new(app.channel().await);
    health
        .check(tonic_health::pb::HealthCheckRequest::default())
        .await
        .expect("health needs no credential");
}
