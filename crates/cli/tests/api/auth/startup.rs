//! A server without authentication refuses a non-loopback address unless told it is insecure
//! on purpose, in process and as the real binary.

use std::net::SocketAddr;

use checkpointd::app::App;
use checkpointd::config::AuthSettings;
use checkpointd::config::ServeConfig;
use checkpointd::config::ServerSettings;

fn on_every_interface(auth: AuthSettings) -> ServeConfig {
    ServeConfig {
        listen: SocketAddr::from(([0, 0, 0, 0], 0)),
        server: ServerSettings {
            auth,
            ..ServerSettings::default()
        },
        ..ServeConfig::default()
    }
}

#[tokio::test]
async fn a_non_loopback_listener_without_auth_refuses_to_start_unless_allowed() {
    let error = App::build(on_every_interface(AuthSettings::default()))
        .await
        .err()
        .expect("no auth on 0.0.0.0 must not start")
        .to_string();
    assert!(error.contains("--allow-unauthenticated"), "{error}");
    assert!(error.contains("--auth"), "{error}");

    let allowed = AuthSettings {
        allow_unauthenticated: true,
        ..AuthSettings::default()
    };
    App::build(on_every_interface(allowed)).await.unwrap();
    let keys = AuthSettings {
        api_keys: true,
        ..AuthSettings::default()
    };
    App::build(on_every_interface(keys)).await.unwrap();
}

#[test]
fn the_binary_refuses_a_public_address_without_auth_and_says_how_to_fix_it() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_checkpointd"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--admin-listen",
            "127.0.0.1:0",
        ])
        .args(["--database", "memory://"])
        .env_remove("CHECKPOINTD_AUTH")
        .env_remove("CHECKPOINTD_ALLOW_UNAUTHENTICATED")
        .env_remove("CHECKPOINTD_CONFIG")
        .output()
        .expect("run checkpointd serve");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--allow-unauthenticated"), "{stderr}");
}
