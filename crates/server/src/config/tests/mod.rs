//! The layering of `checkpointd serve`'s settings, the settings tree it builds, and the
//! declarations themselves: defaults that parse and agree with the crates below, and every
//! setting documented.

mod auth;
mod declarations;
mod limits;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use checkpointd_core::retention::RetentionPolicy;
use checkpointd_core::secret::ExposeSecret;

/// `checkpointd serve` with `settings` and, when given, the config file at `config`.
fn serve_args(config: Option<&Path>, settings: SettingsArgs) -> ServeArgs {
    ServeArgs {
        config: config.map(Path::to_path_buf),
        settings,
    }
}

/// A config file holding `text`, in a directory that lives as long as the returned guard.
fn config_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn flags_override_the_file_and_the_file_overrides_defaults() {
    let (_dir, path) = config_file(
        "listen = \"127.0.0.1:6000\"\ndatabase = \"memory://\"\ndrain_timeout = \"3s\"\n",
    );
    let config = ServeConfig::resolve(serve_args(
        Some(&path),
        SettingsArgs {
            listen: Some("127.0.0.1:7000".parse().unwrap()),
            ..SettingsArgs::default()
        },
    ))
    .unwrap();
    assert_eq!(config.listen.port(), 7000);
    assert_eq!(config.database.expose_secret(), "memory://");
    assert_eq!(config.server.drain_timeout, Duration::from_secs(3));
    assert_eq!(config.server.max_request_bytes, 16 * 1024 * 1024);
}

#[test]
fn retention_flags_override_the_file() {
    let (_dir, path) = config_file(
        "database = \"memory://\"\nretention = \"keep_last:3\"\nprune_interval = \"5m\"\n",
    );
    let config = ServeConfig::resolve(serve_args(
        Some(&path),
        SettingsArgs {
            retention: RetentionArgs {
                prune_interval: Some(Duration::ZERO),
                ..RetentionArgs::default()
            },
            ..SettingsArgs::default()
        },
    ))
    .unwrap();
    let retention = config.server.retention;
    assert_eq!(retention.default_policy, RetentionPolicy::KeepLast(3));
    assert_eq!(retention.prune_interval, Duration::ZERO);
    assert_eq!(retention.batch_size, 500);
}

#[test]
fn the_reap_interval_comes_from_the_flag_over_the_file_over_five_seconds() {
    let (_dir, path) = config_file("database = \"memory://\"\nreap_interval = \"30s\"\n");
    let resolve = |reap_interval, config: Option<&Path>| {
        ServeConfig::resolve(serve_args(
            config,
            SettingsArgs {
                database: Some("memory://".into()),
                queue: QueueArgs {
                    reap_interval,
                    ..QueueArgs::default()
                },
                ..SettingsArgs::default()
            },
        ))
        .unwrap()
        .server
        .reap_interval
    };
    assert_eq!(resolve(None, None), Duration::from_secs(5));
    assert_eq!(resolve(None, Some(&path)), Duration::from_secs(30));
    assert_eq!(resolve(Some(Duration::ZERO), Some(&path)), Duration::ZERO);
}

#[test]
fn auto_resume_hitl_comes_from_the_flag_over_the_file_over_true() {
    let (_dir, path) = config_file("database = \"memory://\"\nauto_resume_hitl = false\n");
    let resolve = |auto_resume_hitl, config: Option<&Path>| {
        ServeConfig::resolve(serve_args(
            config,
            SettingsArgs {
                database: Some("memory://".into()),
                queue: QueueArgs {
                    auto_resume_hitl,
                    ..QueueArgs::default()
                },
                ..SettingsArgs::default()
            },
        ))
        .unwrap()
        .server
        .auto_resume_hitl
    };
    assert!(resolve(None, None));
    assert!(!resolve(None, Some(&path)));
    assert!(resolve(Some(true), Some(&path)));
}

#[test]
fn secrets_never_show_in_debug_output() {
    let (_dir, path) = config_file("redis = \"rediss://user:redis-s3cret@cache:6380\"\n");
    let args = serve_args(
        Some(&path),
        SettingsArgs {
            database: Some("postgres://app:pg-s3cret@db/x?password=pg-s3cret2".into()),
            ..SettingsArgs::default()
        },
    );
    let printed_args = format!("{args:?}");
    let config = ServeConfig::resolve(args).unwrap();
    let printed = format!("{printed_args} {config:?}");
    assert!(!printed.contains("s3cret"), "{printed}");
    let cache = config.cache.unwrap();
    assert_eq!(
        cache.url.expose_secret(),
        "rediss://user:redis-s3cret@cache:6380"
    );
}

#[test]
fn tls_needs_both_the_certificate_and_the_key() {
    let resolve = |cert: Option<&str>, key: Option<&str>, ca: Option<&str>| {
        ServeConfig::resolve(serve_args(
            None,
            SettingsArgs {
                database: Some("memory://".into()),
                tls: TlsArgs {
                    tls_cert: cert.map(PathBuf::from),
                    tls_key: key.map(PathBuf::from),
                    tls_client_ca: ca.map(PathBuf::from),
                    tls_reload_interval: None,
                },
                ..SettingsArgs::default()
            },
        ))
        .map(|config| config.tls)
    };
    assert_eq!(resolve(None, None, None).unwrap(), None);
    let tls = resolve(Some("c.pem"), Some("k.pem"), Some("ca.pem"))
        .unwrap()
        .unwrap();
    assert_eq!(tls.client_ca, Some(PathBuf::from("ca.pem")));
    assert_eq!(tls.reload_interval, Duration::from_secs(2));
    assert!(resolve(Some("c.pem"), None, None).is_err());
    assert!(resolve(None, None, Some("ca.pem")).is_err());
}

#[test]
fn unknown_file_keys_are_rejected() {
    let (_dir, path) = config_file("databse = \"memory://\"\n");
    let error = ServeConfig::resolve(serve_args(Some(&path), SettingsArgs::default())).unwrap_err();
    assert!(error.contains("databse"), "{error}");
}
