//! The request memory settings: caps, the budget and its shares, the body timeout.

use std::time::Duration;

use super::{config_file, serve_args};
use crate::config::{LimitArgs, ServeConfig, SettingsArgs};

/// What the largest request costs the budget decoded at the defaults: 16 MiB and the most
/// messages (10,000) and metadata entries (1,000) it may carry, 128 bytes each.
const LARGEST_COST: usize = (16 << 20) + 11_000 * 128;

#[test]
fn the_memory_limit_comes_from_the_flag_over_the_file_and_is_unset_by_default() {
    let config = resolve("", LimitArgs::default()).unwrap();
    assert_eq!(config.server.limits.memory_limit_bytes, None);
    let config = resolve(
        "memory_limit_bytes = 1000000000
",
        LimitArgs {
            memory_limit_bytes: Some(2_000_000_000),
            ..LimitArgs::default()
        },
    )
    .unwrap();
    assert_eq!(config.server.limits.memory_limit_bytes, Some(2_000_000_000));
    let config = resolve("memory_limit_bytes = 0\n", LimitArgs::default()).unwrap();
    assert_eq!(config.server.limits.memory_limit_bytes, Some(0));
}

fn resolve(file: &str, args: LimitArgs) -> Result<ServeConfig, String> {
    let (_dir, path) = config_file(&format!("database = \"memory://\"\n{file}"));
    ServeConfig::resolve(serve_args(
        Some(&path),
        SettingsArgs {
            limits: args,
            ..SettingsArgs::default()
        },
    ))
}

#[test]
fn limits_come_from_the_flag_over_the_file_over_the_defaults() {
    let config = resolve("", LimitArgs::default()).unwrap();
    assert_eq!(config.server.limits.max_messages_per_save, 10_000);
    assert_eq!(config.server.limits.max_metadata_entries, 1_000);
    assert_eq!(
        config
            .server
            .limits
            .inflight_budget(config.server.max_request_bytes),
        4 * LARGEST_COST
    );
    let config = resolve(
        "max_messages_per_save = 5\nmax_metadata_entries = 6\nmax_inflight_request_bytes = 99999999\n",
        LimitArgs {
            max_messages_per_save: Some(7),
            ..LimitArgs::default()
        },
    )
    .unwrap();
    assert_eq!(config.server.limits.max_messages_per_save, 7);
    assert_eq!(config.server.limits.max_metadata_entries, 6);
    assert_eq!(
        config.server.limits.max_inflight_request_bytes,
        Some(99_999_999)
    );
}

#[test]
fn shares_and_the_body_timeout_come_from_the_flag_over_the_file_over_the_defaults() {
    let config = resolve("", LimitArgs::default()).unwrap();
    let limits = config.server.limits;
    let sizes = limits.budget_sizes(config.server.max_request_bytes);
    assert_eq!(
        (sizes.server, sizes.tenant, sizes.connection),
        (4 * LARGEST_COST, 2 * LARGEST_COST, LARGEST_COST)
    );
    assert_eq!(limits.body_timeout, Duration::from_secs(30));
    let config = resolve(
        "max_request_bytes = 1000\nmax_tenant_request_bytes = 3000\n\
         max_connection_request_bytes = 2000\nrequest_body_timeout = \"7s\"\n",
        LimitArgs {
            max_tenant_request_bytes: Some(2500),
            ..LimitArgs::default()
        },
    )
    .unwrap();
    let limits = config.server.limits;
    assert_eq!(limits.max_tenant_request_bytes, Some(2500));
    assert_eq!(limits.max_connection_request_bytes, Some(2000));
    assert_eq!(limits.body_timeout, Duration::from_secs(7));
}

#[test]
fn a_share_below_the_largest_request_is_refused() {
    let error = resolve(
        "max_request_bytes = 1000\nmax_connection_request_bytes = 999\n",
        LimitArgs::default(),
    )
    .unwrap_err();
    assert!(error.contains("max_connection_request_bytes"), "{error}");
}

#[test]
fn a_budget_below_the_largest_request_is_refused() {
    let error = resolve(
        "max_request_bytes = 1000\nmax_inflight_request_bytes = 999\n",
        LimitArgs::default(),
    )
    .unwrap_err();
    assert!(error.contains("max_inflight_request_bytes"), "{error}");
}
