//! TLS on the gRPC port, with certificates made by the test: who can connect, mTLS, and
//! certificates rotated on disk or by SIGHUP on a real process, served without a restart.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use checkpointd::config::ServeConfig;
use checkpointd::config::TlsSettings;
use checkpointd::proto::ClaimRequest;
use checkpointd_runner::api::RunnerApi;
use checkpointd_runner::client::Clients;
use checkpointd_runner::dial::{Dial, DialArgs};
use checkpointd_testkit::{CertFiles, TestCa, first_cert_der};
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::support::{ServerProcess, TestApp, serve_config, wait_until};

/// An in-process server speaking TLS with a certificate for `localhost` signed by `ca`;
/// clients must show a certificate signed by `ca` too when `mtls`.
async fn tls_app(ca: &TestCa, mtls: bool) -> (TestApp, CertFiles) {
    let cert = ca.server_cert("server", &["localhost"]);
    let (app, _) = serve_config(ServeConfig {
        tls: Some(TlsSettings {
            client_ca: mtls.then(|| ca.ca_cert()),
            ..TlsSettings::new(&cert.cert, &cert.key)
        }),
        ..ServeConfig::default()
    })
    .await;
    (app, cert)
}

fn https(addr: SocketAddr) -> String {
    format!("https://localhost:{}", addr.port())
}

/// One health Check over a fresh connection dialled as `args` say.
async fn check(addr: SocketAddr, args: &DialArgs) -> Result<(), String> {
    let dial = args.dial(&https(addr))?;
    let channel = dial
        .endpoint()?
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .map_err(|error| format!("connect: {error:?}"))?;
    HealthClient::new(channel)
        .check(HealthCheckRequest::default())
        .await
        .map_err(|status| format!("check: {status:?}"))?;
    Ok(())
}

fn trusting(ca: &TestCa) -> DialArgs {
    DialArgs {
        ca_cert: Some(ca.ca_cert()),
        ..DialArgs::default()
    }
}

/// The certificate the server presents to a new connection right now.
async fn served_cert(addr: SocketAddr, ca: &Path) -> Vec<u8> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = TcpStream::connect(addr).await.unwrap();
    let tls = TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .expect("TLS handshake with the test CA");
    tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

#[tokio::test]
async fn a_client_connects_only_when_it_trusts_the_servers_ca() {
    let ca = TestCa::new("checkpointd test CA");
    let (app, _) = tls_app(&ca, false).await;

    let error = check(app.addr, &DialArgs::default()).await.unwrap_err();
    assert!(error.contains("connect"), "{error}");
    let other_ca = TestCa::new("some other CA");
    assert!(check(app.addr, &trusting(&other_ca)).await.is_err());
    // Plain text to a TLS port gets nowhere either.
    let plain = Dial::plain(&format!("http://127.0.0.1:{}", app.addr.port())).unwrap();
    let channel = plain.endpoint().unwrap().connect().await;
    let plain_call = match channel {
        Ok(channel) => HealthClient::new(channel)
            .check(HealthCheckRequest::default())
            .await
            .is_ok(),
        Err(_) => false,
    };
    assert!(!plain_call, "a plain-text call succeeded on the TLS port");

    check(app.addr, &trusting(&ca)).await.unwrap();
    // The worker's clients dial the same way.
    let dial = trusting(&ca).dial(&https(app.addr)).unwrap();
    let clients = Clients::dial(&dial, None).await.unwrap();
    let claimed = clients
        .claim(ClaimRequest {
            worker_id: "w".into(),
            batch_size: 1,
            ..ClaimRequest::default()
        })
        .await
        .unwrap();
    assert!(claimed.is_empty());
}

#[tokio::test]
async fn mtls_accepts_only_clients_with_a_certificate_from_the_ca() {
    let ca = TestCa::new("checkpointd test CA");
    let (app, _) = tls_app(&ca, true).await;

    let error = check(app.addr, &trusting(&ca)).await.unwrap_err();
    assert!(
        error.contains("connect") || error.contains("check"),
        "{error}"
    );

    let stranger = TestCa::new("a stranger's CA").client_cert("stranger", "stranger");
    let with = |cert: &CertFiles| DialArgs {
        client_cert: Some(cert.cert.clone()),
        client_key: Some(cert.key.clone()),
        ..trusting(&ca)
    };
    assert!(check(app.addr, &with(&stranger)).await.is_err());

    let worker = ca.client_cert("worker", "worker-1");
    check(app.addr, &with(&worker)).await.unwrap();
}

#[tokio::test]
async fn a_certificate_rotated_on_disk_is_served_to_new_connections_and_live_ones_stay() {
    let ca = TestCa::new("checkpointd test CA");
    let (app, cert) = tls_app(&ca, false).await;
    let first = first_cert_der(&cert.cert);
    assert_eq!(served_cert(app.addr, &ca.ca_cert()).await, first);
    let dial = trusting(&ca).dial(&https(app.addr)).unwrap();
    let mut live = HealthClient::new(dial.endpoint().unwrap().connect().await.unwrap());
    live.check(HealthCheckRequest::default()).await.unwrap();

    let rotated = ca.server_cert("server", &["localhost"]);
    let second = first_cert_der(&rotated.cert);
    assert_ne!(first, second);
    wait_until("the rotated certificate is served", || async {
        served_cert(app.addr, &ca.ca_cert()).await == second
    })
    .await;
    // The connection made before the rotation still works.
    live.check(HealthCheckRequest::default()).await.unwrap();
}

/// Runs the real binary with `args`, async so the test's runtime keeps going meanwhile.
async fn checkpointd(args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args(args)
        .output()
        .await
        .expect("run checkpointd")
}

#[tokio::test]
async fn sighup_makes_a_real_process_serve_a_rotated_certificate_and_the_cli_dials_https() {
    let ca = TestCa::new("checkpointd test CA");
    let cert = ca.server_cert("server", &["localhost"]);
    let (cert_path, key_path) = (cert.cert.to_str().unwrap(), cert.key.to_str().unwrap());
    // File polling off, so only the signal can bring the new certificate in.
    let server = ServerProcess::start(
        "memory://",
        &[
            "--tls-cert",
            cert_path,
            "--tls-key",
            key_path,
            "--tls-reload-interval",
            "0s",
        ],
    );
    let first = first_cert_der(&cert.cert);
    assert_eq!(served_cert(server.addr, &ca.ca_cert()).await, first);

    let url = https(server.addr);
    let ca_path = ca.ca_cert();
    let ca_arg = ca_path.to_str().unwrap();
    let health = checkpointd(&["health", "--addr", &url, "--ca-cert", ca_arg]).await;
    assert!(health.status.success(), "{health:?}");
    assert_eq!(String::from_utf8_lossy(&health.stdout).trim(), "SERVING");
    let untrusted = checkpointd(&["health", "--addr", &url]).await;
    assert!(!untrusted.status.success(), "{untrusted:?}");
    let listed = checkpointd(&["tasks", "list", "--server", &url, "--ca-cert", ca_arg]).await;
    assert!(listed.status.success(), "{listed:?}");

    let rotated = ca.server_cert("server", &["localhost"]);
    let second = first_cert_der(&rotated.cert);
    assert_eq!(served_cert(server.addr, &ca.ca_cert()).await, first);
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    wait_until("SIGHUP brings in the rotated certificate", || async {
        served_cert(server.addr, &ca.ca_cert()).await == second
    })
    .await;
}
