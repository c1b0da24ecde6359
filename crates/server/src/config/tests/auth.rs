//! The authentication settings: modes, key sources, and the file under the flags.

use std::time::Duration;

use super::{config_file, serve_args};
use crate::config::auth::parse_mode;
use crate::config::file::FileLayer;
use crate::config::{AuthArgs, AuthSettings, JwtKeys, ServeConfig, SettingsArgs, SettingsGroup};

/// `args` alone, over the declared defaults.
fn settings(args: AuthArgs) -> Result<AuthSettings, String> {
    AuthSettings::from_values(args.resolve(&FileLayer::empty())?)
}

#[test]
fn modes_combine_and_nonsense_is_refused() {
    assert_eq!(parse_mode("none"), Ok((false, false)));
    assert_eq!(parse_mode("api-key,jwt"), Ok((true, true)));
    assert_eq!(parse_mode("jwt"), Ok((false, true)));
    assert!(parse_mode("none,jwt").is_err());
    assert!(parse_mode("password").is_err());
}

#[test]
fn jwt_needs_exactly_one_key_source() {
    let args = |secret: bool, url: bool| AuthArgs {
        auth: Some("jwt".into()),
        jwt_secret_file: secret.then(|| "/s".into()),
        jwt_jwks_url: url.then(|| "http://127.0.0.1:1/jwks".into()),
        ..AuthArgs::default()
    };
    assert!(settings(args(false, false)).is_err());
    assert!(settings(args(true, true)).is_err());
    let resolved = settings(args(false, true)).unwrap();
    let jwt = resolved.jwt.unwrap();
    assert_eq!(jwt.tenant_claim, "tenant_id");
    assert_eq!(jwt.jwks_refresh, Duration::from_secs(300));
}

#[test]
fn the_config_file_sets_auth_and_flags_override_it() {
    let (_dir, path) = config_file(
        "database = \"memory://\"\nauth = \"jwt\"\njwt_secret_file = \"/run/secret\"\n\
         jwt_audience = \"checkpointd\"\njwt_jwks_refresh = \"1m\"\n",
    );
    let resolve = |auth: AuthArgs| {
        ServeConfig::resolve(serve_args(
            Some(&path),
            SettingsArgs {
                auth: Box::new(auth),
                ..SettingsArgs::default()
            },
        ))
        .map(|config| config.server.auth)
    };
    let from_file = resolve(AuthArgs::default()).unwrap();
    let jwt = from_file.jwt.unwrap();
    assert_eq!(jwt.keys, JwtKeys::SecretFile("/run/secret".into()));
    assert_eq!(jwt.audience.as_deref(), Some("checkpointd"));
    assert_eq!(jwt.jwks_refresh, Duration::from_secs(60));
    assert!(!from_file.api_keys);
    let both = resolve(AuthArgs {
        auth: Some("api-key,jwt".into()),
        jwt_audience: Some("other".into()),
        ..AuthArgs::default()
    })
    .unwrap();
    assert!(both.api_keys);
    assert_eq!(both.jwt.unwrap().audience.as_deref(), Some("other"));
}

#[test]
fn jwt_flags_without_jwt_mode_are_refused() {
    let args = AuthArgs {
        auth: Some("api-key".into()),
        jwt_secret_file: Some("/s".into()),
        ..AuthArgs::default()
    };
    assert!(settings(args).is_err());
}
