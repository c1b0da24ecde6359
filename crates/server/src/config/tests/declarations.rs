//! The declarations themselves: every default parses into a valid tree and agrees with the
//! crates below that keep their own, every setting's flag, variable and file key share one
//! name, and docs/configuration.md documents each of them with its default.

use clap::Args;

use crate::config::declare::{Declared, SettingsGroup};
use crate::config::file::FileLayer;
use crate::config::{ServeArgs, ServerSettings, SettingsArgs};
use checkpointd_core::queue::RetryPolicy;
use checkpointd_storage::store::StoreOptions;

fn declared() -> Vec<Declared> {
    let mut settings = Vec::new();
    SettingsArgs::declared(&mut settings);
    settings
}

#[test]
fn every_declared_default_parses_into_a_valid_settings_tree() {
    let settings = SettingsArgs::default()
        .resolve(&FileLayer::empty())
        .unwrap();
    ServerSettings::from_settings(settings).unwrap();
}

#[test]
fn declared_defaults_agree_with_the_defaults_the_crates_below_keep() {
    let settings = SettingsArgs::default()
        .resolve(&FileLayer::empty())
        .unwrap();
    let retry = RetryPolicy::default();
    assert_eq!(settings.queue.queue_max_attempts, retry.max_attempts);
    assert_eq!(settings.queue.queue_initial_delay, retry.initial_delay);
    assert_eq!(settings.queue.queue_max_delay, retry.max_delay);
    assert_eq!(settings.pool_size, StoreOptions::default().pool_size);
}

#[test]
fn each_setting_has_one_name_as_flag_variable_and_file_key() {
    let command = ServeArgs::augment_args(clap::Command::new("serve"));
    let keys: Vec<&str> = declared().iter().map(|setting| setting.key).collect();
    let args: Vec<_> = command
        .get_arguments()
        .filter(|arg| arg.get_id() != "config")
        .collect();
    assert_eq!(args.len(), keys.len());
    for arg in args {
        let key = arg.get_id().as_str();
        assert!(keys.contains(&key), "--{key} has no file key");
        assert_eq!(arg.get_long(), Some(key.replace('_', "-").as_str()));
        let env = arg.get_env().and_then(|env| env.to_str());
        let expected = format!("CHECKPOINTD_{}", key.to_uppercase());
        assert_eq!(env, Some(expected.as_str()), "--{key}");
    }
}

#[test]
fn every_setting_is_documented_with_its_default_in_configuration_md() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let docs = std::fs::read_to_string(path).unwrap();
    let rows: Vec<&str> = docs
        .lines()
        .filter(|line| line.starts_with("| `--"))
        .collect();
    for setting in declared() {
        let flag = format!("| `--{}` |", setting.key.replace('_', "-"));
        let row = rows
            .iter()
            .find(|row| row.starts_with(&flag))
            .unwrap_or_else(|| panic!("docs/configuration.md has no row for {flag}"));
        let env = format!("`CHECKPOINTD_{}`", setting.key.to_uppercase());
        let key = format!("`{}`", setting.key);
        assert!(row.contains(&env) && row.contains(&key), "{row}");
        let cells: Vec<&str> = row.split(" | ").collect();
        if let Some(default) = setting.default {
            let literal = format!("`{default}`");
            assert!(cells[3].contains(&literal), "{row}: default {literal}");
        }
    }
}
