//! How the console is set up: over TLS its cookie is `Secure`; it will not start without
//! authentication; an all-tenants admin key works in the tenant it names at sign-in.

use std::net::SocketAddr;
use std::time::Duration;

use checkpointd::app::App;
use checkpointd::config::{ConsoleSettings, ServeConfig, ServerSettings, TlsSettings};
use checkpointd_core::domain::Role;
use checkpointd_testkit::TestCa;

use super::http::{get, post, post_tls};
use super::{console, console_app, sign_in};
use crate::auth::{api_key_auth, make_key, save_as};
use crate::support::serve_config;

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

#[tokio::test]
async fn over_tls_the_console_speaks_https_and_its_cookie_is_secure() {
    let ca = TestCa::new("console test CA");
    let cert = ca.server_cert("server", &["localhost"]);
    let (app, _) = serve_config(ServeConfig {
        server: ServerSettings {
            auth: api_key_auth(),
            ..ServerSettings::default()
        },
        tls: Some(TlsSettings::new(&cert.cert, &cert.key)),
        console: Some(ConsoleSettings::new(loopback())),
        ..ServeConfig::default()
    })
    .await;
    let (_, operator) = make_key(&app, Some("acme"), Role::Operator).await;
    let fields = [("api_key", operator.as_str())];
    let reply = post_tls(console(&app), &ca.ca_cert(), "/sign-in", &fields).await;
    assert_eq!(reply.status, 303, "{reply:?}");
    let cookie = reply.header("set-cookie").unwrap();
    assert!(cookie.contains("; Secure"), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
}

#[tokio::test]
async fn the_console_does_not_start_without_authentication() {
    let refused = App::build(ServeConfig {
        console: Some(ConsoleSettings::new(loopback())),
        ..ServeConfig::default()
    })
    .await;
    let error = refused.err().expect("no console without auth").to_string();
    assert!(error.contains("--auth api-key"), "{error}");
}

#[tokio::test]
async fn an_all_tenants_admin_works_in_the_tenant_it_names_at_sign_in() {
    let app = console_app(Duration::from_secs(900)).await;
    let (_, admin) = make_key(&app, None, Role::Admin).await;
    save_as(&app, &admin, Some("tenant-b"), "b-run", 1)
        .await
        .unwrap();
    save_as(&app, &admin, None, "default-run", 1).await.unwrap();

    let in_b = sign_in(&app, &admin, "tenant-b").await;
    let cookie = in_b.session_cookie().unwrap();
    let runs = get(console(&app), "/runs", Some(&cookie)).await;
    assert!(runs.body.contains("in tenant <strong>tenant-b</strong>"));
    assert!(runs.body.contains("b-run") && !runs.body.contains("default-run"));

    let unnamed = sign_in(&app, &admin, "").await.session_cookie().unwrap();
    let runs = get(console(&app), "/runs", Some(&unnamed)).await;
    assert!(runs.body.contains("default-run") && !runs.body.contains("b-run"));
    assert_eq!(sign_in(&app, &admin, "bell\u{7}").await.status, 403);
    // Signing out ends the session at once.
    let token = runs.csrf();
    let out = post(
        console(&app),
        "/sign-out",
        Some(&unnamed),
        &[("csrf", &token)],
    )
    .await;
    assert_eq!(out.status, 303);
    assert_eq!(
        get(console(&app), "/runs", Some(&unnamed)).await.status,
        303
    );
}

/// `checkpointd serve` with the console on every interface over plain HTTP, plus `extra`.
fn serve_console_on_every_interface(extra: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--admin-listen",
            "127.0.0.1:0",
        ])
        .args(["--database", "memory://", "--auth", "api-key"])
        .args(["--console-listen", "0.0.0.0:0"])
        .args(extra)
        .env_remove("CHECKPOINTD_CONSOLE_TRUSTED_NETWORK")
        .env_remove("CHECKPOINTD_TLS_CERT")
        .env_remove("CHECKPOINTD_TLS_KEY")
        .env_remove("CHECKPOINTD_CONFIG")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run checkpointd serve");
    // A server that starts prints its addresses and serves until stopped: read the first
    // three lines (admin, gRPC, console) and then stop it; one that refuses exits by itself.
    let stdout = child.stdout.take().unwrap();
    let lines: Vec<String> = std::io::BufRead::lines(std::io::BufReader::new(stdout))
        .map_while(Result::ok)
        .take(3)
        .collect();
    let _ = child.kill();
    let output = child.wait_with_output().expect("wait for checkpointd");
    std::process::Output {
        stdout: lines.join("\n").into_bytes(),
        ..output
    }
}

#[test]
fn a_cleartext_console_on_a_public_address_refuses_to_start_and_names_both_ways_out() {
    let refused = serve_console_on_every_interface(&[]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("without TLS"), "{stderr}");
    assert!(stderr.contains("--tls-cert"), "{stderr}");
    assert!(stderr.contains("--console-trusted-network"), "{stderr}");
    assert!(
        refused.stdout.is_empty(),
        "it printed an address: {refused:?}"
    );

    let trusted = serve_console_on_every_interface(&["--console-trusted-network"]);
    let stdout = String::from_utf8_lossy(&trusted.stdout);
    assert!(
        stdout.contains("console listening on 0.0.0.0:"),
        "{stdout} / {}",
        String::from_utf8_lossy(&trusted.stderr)
    );
}
