//! The credential a client is given (`--token` / `CHECKPOINTD_TOKEN`) goes out as
//! `authorization: Bearer TOKEN`, seen here by a health server that records the header.

use std::sync::{Arc, Mutex};

use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::Server;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::HealthService;

#[tokio::test]
async fn the_health_command_sends_the_token_as_a_bearer_credential() {
    let (reporter, _) = tonic_health::server::health_reporter();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = seen.clone();
    let service = HealthServer::with_interceptor(
        HealthService::from_health_reporter(reporter),
        move |request: tonic::Request<()>| {
            let header = request
                .metadata()
                .get("authorization")
                .map(|value| value.to_str().unwrap_or("(not ASCII)").to_owned())
                .unwrap_or_default();
            record.lock().unwrap().push(header);
            Ok(request)
        },
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        Server::builder()
            .add_service(service)
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );

    let run = |args: Vec<String>, env: Option<&'static str>| async move {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"));
        command
            .arg("health")
            .args(args)
            .env_remove("CHECKPOINTD_TOKEN");
        if let Some(token) = env {
            command.env("CHECKPOINTD_TOKEN", token);
        }
        command.output().await.unwrap()
    };
    let addr_args = vec!["--addr".to_owned(), addr.to_string()];
    let flag = run(
        [
            addr_args.clone(),
            vec!["--token".into(), "tok-flag-1".into()],
        ]
        .concat(),
        None,
    )
    .await;
    assert!(flag.status.success(), "{flag:?}");
    let env = run(addr_args.clone(), Some("tok-env-2")).await;
    assert!(env.status.success(), "{env:?}");
    let none = run(addr_args, None).await;
    assert!(none.status.success(), "{none:?}");

    assert_eq!(
        *seen.lock().unwrap(),
        ["Bearer tok-flag-1", "Bearer tok-env-2", ""]
    );
}
