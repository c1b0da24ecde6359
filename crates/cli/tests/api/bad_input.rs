//! Every kind of bad input gets its exact gRPC code, changes nothing, and the server stays up.

use checkpointd::config::ServerSettings;
use checkpointd::proto::{
    DeleteRunRequest, ListCheckpointsRequest, LoadAtStepRequest, LoadLatestRequest, ResumeRequest,
    SaveRequest, ValidateRequest,
};
use tonic::Code;

use crate::support::requests::{message, save, tool};
use crate::support::{Backend, for_tenant, spawn_app_with};

const LIMIT: usize = 64 * 1024;

async fn each_bad_input_gets_its_exact_code_and_changes_nothing(backend: Backend) {
    let app = spawn_app_with(
        backend,
        ServerSettings {
            max_request_bytes: LIMIT,
            ..ServerSettings::default()
        },
    )
    .await;
    let client = app.client().await;
    let mut setup = client.clone();
    setup
        .save(SaveRequest {
            messages: vec![message("user", "hello")],
            ..save("run-1", 1, b"original")
        })
        .await
        .unwrap();
    let resumed = setup
        .resume(ResumeRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let epoch = Some(resumed.epoch);
    setup
        .save(SaveRequest {
            epoch,
            message_offset: 1,
            ..save("run-1", 2, b"second")
        })
        .await
        .unwrap();
    let valid = SaveRequest {
        epoch,
        message_offset: 1,
        ..save("run-1", 3, b"next")
    };

    let saves: Vec<(&str, SaveRequest, Code)> = vec![
        (
            "empty run id",
            SaveRequest {
                run_id: String::new(),
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
        (
            "overlong run id",
            SaveRequest {
                run_id: "r".repeat(257),
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
        (
            "control character in run id",
            SaveRequest {
                run_id: "a\u{7}b".into(),
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
        (
            "negative step",
            SaveRequest {
                step: -1,
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
        (
            "checksum mismatch",
            SaveRequest {
                checksum: Some("0".repeat(64)),
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
        (
            "checksum not hex",
            SaveRequest {
                checksum: Some("xyz".into()),
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
        (
            "message offset past the log (a lost predecessor)",
            SaveRequest {
                message_offset: 5,
                messages: vec![message("user", "x")],
                ..valid.clone()
            },
            Code::FailedPrecondition,
        ),
        (
            "message offset behind the log",
            SaveRequest {
                message_offset: 0,
                messages: vec![message("user", "x")],
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
        (
            "oversized request",
            SaveRequest {
                state: vec![7; LIMIT + 1],
                ..valid.clone()
            },
            Code::ResourceExhausted,
        ),
        (
            "stale epoch",
            SaveRequest {
                epoch: Some(0),
                ..valid.clone()
            },
            Code::FailedPrecondition,
        ),
        (
            "epoch never issued",
            SaveRequest {
                epoch: Some(99),
                ..valid.clone()
            },
            Code::FailedPrecondition,
        ),
        (
            "step behind the latest",
            SaveRequest {
                step: 0,
                ..valid.clone()
            },
            Code::FailedPrecondition,
        ),
        (
            "different content at an existing step",
            SaveRequest {
                step: 2,
                ..valid.clone()
            },
            Code::AlreadyExists,
        ),
        (
            "overlong content type",
            SaveRequest {
                content_type: "t".repeat(300),
                ..valid.clone()
            },
            Code::InvalidArgument,
        ),
    ];
    for (name, request, code) in saves {
        let status = client.clone().save(request).await.expect_err(name);
        assert_eq!(status.code(), code, "{name}: {status:?}");
        assert!(!status.message().is_empty(), "{name} has no message");
    }

    let mut c = client.clone();
    let others: Vec<(&str, Result<(), tonic::Status>, Code)> = vec![
        (
            "load latest of an unknown run",
            c.load_latest(LoadLatestRequest {
                run_id: "nope".into(),
                ..Default::default()
            })
            .await
            .map(drop),
            Code::NotFound,
        ),
        (
            "load an unknown step",
            c.load_at_step(LoadAtStepRequest {
                run_id: "run-1".into(),
                step: 9,
                ..Default::default()
            })
            .await
            .map(drop),
            Code::NotFound,
        ),
        (
            "load a negative step",
            c.load_at_step(LoadAtStepRequest {
                run_id: "run-1".into(),
                step: -3,
                ..Default::default()
            })
            .await
            .map(drop),
            Code::InvalidArgument,
        ),
        (
            "validate an unknown run",
            c.validate(ValidateRequest {
                run_id: "nope".into(),
                step: None,
            })
            .await
            .map(drop),
            Code::NotFound,
        ),
        (
            "list an unknown run",
            c.list_checkpoints(ListCheckpointsRequest {
                run_id: "nope".into(),
                ..Default::default()
            })
            .await
            .map(drop),
            Code::NotFound,
        ),
        (
            "page size too large",
            c.list_checkpoints(ListCheckpointsRequest {
                run_id: "run-1".into(),
                page_size: 5000,
                ..Default::default()
            })
            .await
            .map(drop),
            Code::InvalidArgument,
        ),
        (
            "bad page token",
            c.list_checkpoints(ListCheckpointsRequest {
                run_id: "run-1".into(),
                page_token: "abc".into(),
                ..Default::default()
            })
            .await
            .map(drop),
            Code::InvalidArgument,
        ),
        (
            "delete an unknown run",
            c.delete_run(DeleteRunRequest {
                run_id: "nope".into(),
            })
            .await
            .map(drop),
            Code::NotFound,
        ),
        (
            "empty call id",
            c.record_tool_result(tool("run-1", "", 1, "x"))
                .await
                .map(drop),
            Code::InvalidArgument,
        ),
        (
            "tool result with a stale epoch",
            c.record_tool_result(tool("run-1", "c1", 1, "x"))
                .await
                .map(drop),
            Code::FailedPrecondition,
        ),
        (
            "overlong tenant",
            c.load_latest(for_tenant(
                &"t".repeat(300),
                LoadLatestRequest {
                    run_id: "run-1".into(),
                    ..Default::default()
                },
            ))
            .await
            .map(drop),
            Code::InvalidArgument,
        ),
    ];
    for (name, outcome, code) in others {
        let status = outcome.expect_err(name);
        assert_eq!(status.code(), code, "{name}: {status:?}");
    }

    // Nothing above changed the run, and the server still answers.
    let latest = c
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let checkpoint = latest.checkpoint.unwrap();
    assert_eq!(
        (checkpoint.step, checkpoint.state.as_slice()),
        (2, b"second".as_slice())
    );
    assert_eq!(checkpoint.message_count, 1);
    assert!(latest.tool_results.is_empty());
    c.save(valid)
        .await
        .expect("the valid request still succeeds");
}

crate::for_each_backend!(each_bad_input_gets_its_exact_code_and_changes_nothing);
