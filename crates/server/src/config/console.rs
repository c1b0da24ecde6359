//! The web console's settings: where it listens (off unless set), how long a sign-in lasts,
//! and the OpenID Connect provider people may sign in through.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::auth::AuthValues;
use super::declare::settings;
use super::parse_duration;

settings! {
    /// Web console flags of `checkpointd serve`.
    pub struct ConsoleArgs => ConsoleValues {
        /// HTTP address of the web console (docs/console.md), e.g. `127.0.0.1:8080`; TLS with
        /// the gRPC port's certificate when `--tls-cert` is set. Unset: no console.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_LISTEN")]
        pub console_listen: SocketAddr = unset;
        /// Serve the console over plain HTTP on a non-loopback --console-listen address:
        /// the network between browsers and the server is trusted (operator API keys and
        /// session cookies cross it in cleartext).
        #[arg(
            long,
            env = "CHECKPOINTD_CONSOLE_TRUSTED_NETWORK",
            action = clap::ArgAction::SetTrue
        )]
        pub console_trusted_network: bool = switch;
        /// How long a console sign-in lasts before the person must sign in again.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_SESSION_TTL")]
        pub console_session_ttl: Duration = "15m", parsed by parse_duration;
        /// Issuer URL of the OpenID Connect provider people sign in to the console through
        /// (discovered at startup); role and tenant come from --jwt-role-claim and
        /// --jwt-tenant-claim of its ID tokens. Unset: API keys only.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_OIDC_ISSUER")]
        pub console_oidc_issuer: String = unset;
        /// The console's client id at the OpenID Connect provider.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_OIDC_CLIENT_ID")]
        pub console_oidc_client_id: String = unset;
        /// File holding the console's client secret at the provider; unset: a public client
        /// (PKCE alone).
        #[arg(long, env = "CHECKPOINTD_CONSOLE_OIDC_CLIENT_SECRET_FILE")]
        pub console_oidc_client_secret_file: PathBuf = unset;
        /// Scopes asked for besides `openid`, space-separated (those that put the role and
        /// tenant claims in the ID token).
        #[arg(long, env = "CHECKPOINTD_CONSOLE_OIDC_SCOPES")]
        pub console_oidc_scopes: String = unset;
        /// The name on the sign-in page's "Sign in with ..." link; unset: the issuer's host.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_OIDC_PROVIDER_NAME")]
        pub console_oidc_provider_name: String = unset;
        /// The console's URL as browsers reach it, e.g. `https://console.example.com`:
        /// `integrity.corrupt` webhooks link to its integrity page, and the OpenID redirect URI
        /// is this plus `/sign-in/oidc/callback`.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_PUBLIC_URL")]
        pub console_public_url: String = unset;
    }
}

/// The web console, when `--console-listen` is set.
#[derive(Clone, Debug)]
pub struct ConsoleSettings {
    /// Where the console's HTTP (or HTTPS) listener binds.
    pub listen: SocketAddr,
    /// How long a session lives after the person's last request (within its absolute life,
    /// see the console's session module).
    pub session_ttl: Duration,
    /// Sign-in through an OpenID Connect provider, when `--console-oidc-issuer` is set.
    pub oidc: Option<OidcSettings>,
    /// The console's URL as browsers reach it (`--console-public-url`, no trailing slash),
    /// when set: webhooks link to its pages.
    pub public_url: Option<String>,
}

/// The console's OpenID Connect provider and how its ID tokens map to an identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcSettings {
    pub issuer: String,
    pub client_id: String,
    /// Read at startup; `None`: a public client.
    pub client_secret_file: Option<PathBuf>,
    /// Scopes besides `openid`.
    pub scopes: Vec<String>,
    pub provider_name: String,
    /// Where the provider sends the browser back: `--console-public-url` +
    /// `/sign-in/oidc/callback`.
    pub redirect_url: String,
    /// The claims naming the role and the tenant, the gRPC port's own (`--jwt-*-claim`).
    pub role_claim: String,
    pub tenant_claim: String,
}

/// The path the provider redirects back to, under `--console-public-url`.
pub const OIDC_CALLBACK_PATH: &str = "/sign-in/oidc/callback";

impl ConsoleSettings {
    /// A console on `listen` with the declared session lifetime and API-key sign-in only.
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            session_ttl: super::declare::declared_defaults::<ConsoleArgs>().console_session_ttl,
            oidc: None,
            public_url: None,
        }
    }

    /// The console these values describe; `None` when no address is set. The claim names
    /// come from the authentication settings, so both ports map claims alike. `tls` says
    /// whether the server has a certificate (the console then speaks HTTPS).
    pub(super) fn from_values(
        values: ConsoleValues,
        auth: &AuthValues,
        tls: bool,
    ) -> Result<Option<Self>, String> {
        let Some(listen) = values.console_listen else {
            return Ok(None);
        };
        check_cleartext(listen, tls, values.console_trusted_network)?;
        if values.console_session_ttl.is_zero() {
            return Err("--console-session-ttl must be longer than 0s".into());
        }
        let public_url = checked_public_url(values.console_public_url.as_deref())?;
        Ok(Some(Self {
            listen,
            session_ttl: values.console_session_ttl,
            oidc: OidcSettings::from_values(values, auth, public_url.as_deref())?,
            public_url,
        }))
    }
}

/// `--console-public-url` without its trailing slash, when it is an http(s) URL with a host.
fn checked_public_url(public_url: Option<&str>) -> Result<Option<String>, String> {
    let Some(public_url) = public_url else {
        return Ok(None);
    };
    let parsed = reqwest::Url::parse(public_url)
        .map_err(|error| format!("invalid --console-public-url {public_url:?}: {error}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(format!(
            "--console-public-url {public_url:?}: use an http:// or https:// URL"
        ));
    }
    Ok(Some(public_url.trim_end_matches('/').to_owned()))
}

/// Refuses a plain-HTTP console that browsers reach over a network: sign-in sends an operator
/// API key and every request a session cookie, both readable on the wire without TLS. The
/// gRPC port refuses to serve without authentication on such an address the same way.
fn check_cleartext(listen: SocketAddr, tls: bool, trusted_network: bool) -> Result<(), String> {
    if tls || trusted_network || listen.ip().is_loopback() {
        return Ok(());
    }
    Err(format!(
        "refusing to serve the web console on {listen} without TLS: operator API keys and \
         session cookies would cross the network in cleartext. Set --tls-cert and --tls-key \
         (CHECKPOINTD_TLS_CERT, CHECKPOINTD_TLS_KEY) so the console speaks HTTPS, listen on a \
         loopback address, or pass --console-trusted-network \
         (CHECKPOINTD_CONSOLE_TRUSTED_NETWORK=true) if the network is trusted (e.g. TLS ends \
         at a proxy on the same host)"
    ))
}

impl OidcSettings {
    /// The provider these values describe; `public_url` is the checked `--console-public-url`,
    /// which the redirect URI is built from.
    fn from_values(
        values: ConsoleValues,
        auth: &AuthValues,
        public_url: Option<&str>,
    ) -> Result<Option<Self>, String> {
        let Some(issuer) = values.console_oidc_issuer else {
            let stray = values.console_oidc_client_id.is_some()
                || values.console_oidc_client_secret_file.is_some();
            if stray {
                return Err(
                    "--console-oidc-client-id and --console-oidc-client-secret-file need \
                     --console-oidc-issuer"
                        .into(),
                );
            }
            return Ok(None);
        };
        let issuer_url = reqwest::Url::parse(&issuer)
            .map_err(|error| format!("invalid --console-oidc-issuer {issuer:?}: {error}"))?;
        let client_id = values
            .console_oidc_client_id
            .ok_or("--console-oidc-issuer needs --console-oidc-client-id")?;
        let public_url = public_url.ok_or(
            "--console-oidc-issuer needs --console-public-url, the console's URL as browsers \
             reach it (the redirect URI is built from it)",
        )?;
        let provider_name = values
            .console_oidc_provider_name
            .or_else(|| issuer_url.host_str().map(str::to_owned))
            .unwrap_or_else(|| issuer.clone());
        Ok(Some(Self {
            issuer,
            client_id,
            client_secret_file: values.console_oidc_client_secret_file,
            scopes: values
                .console_oidc_scopes
                .unwrap_or_default()
                .split_whitespace()
                .filter(|scope| *scope != "openid")
                .map(str::to_owned)
                .collect(),
            provider_name,
            redirect_url: format!("{public_url}{OIDC_CALLBACK_PATH}"),
            role_claim: auth.jwt_role_claim.clone(),
            tenant_claim: auth.jwt_tenant_claim.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AuthArgs;
    use crate::config::declare::declared_defaults;

    fn values(listen: Option<&str>, ttl: u64) -> ConsoleValues {
        ConsoleValues {
            console_listen: listen.map(|addr| addr.parse().unwrap()),
            console_session_ttl: Duration::from_secs(ttl),
            ..declared_defaults::<ConsoleArgs>()
        }
    }

    fn resolve(values: ConsoleValues) -> Result<Option<ConsoleSettings>, String> {
        ConsoleSettings::from_values(values, &declared_defaults::<AuthArgs>(), false)
    }

    #[test]
    fn a_cleartext_console_off_loopback_is_refused_unless_tls_or_a_trusted_network() {
        let open = values(Some("0.0.0.0:8080"), 60);
        let refused = resolve(open.clone()).unwrap_err();
        assert!(refused.contains("--tls-cert"), "{refused}");
        assert!(refused.contains("--console-trusted-network"), "{refused}");
        let auth = declared_defaults::<AuthArgs>();
        assert!(
            ConsoleSettings::from_values(open.clone(), &auth, true)
                .unwrap()
                .is_some()
        );
        let trusted = ConsoleValues {
            console_trusted_network: true,
            ..open
        };
        assert!(resolve(trusted).unwrap().is_some());
        assert!(resolve(values(Some("[::1]:8080"), 60)).unwrap().is_some());
    }

    #[test]
    fn the_console_is_off_without_an_address_and_a_zero_session_life_is_refused() {
        assert!(resolve(values(None, 900)).unwrap().is_none());
        let on = resolve(values(Some("127.0.0.1:8080"), 60))
            .unwrap()
            .unwrap();
        assert_eq!(on.session_ttl, Duration::from_secs(60));
        assert!(on.oidc.is_none());
        assert!(resolve(values(Some("127.0.0.1:8080"), 0)).is_err());
        assert_eq!(
            ConsoleSettings::new(on.listen).session_ttl,
            Duration::from_secs(15 * 60)
        );
    }

    #[test]
    fn oidc_sign_in_takes_the_grpc_ports_claims_and_redirects_under_the_public_url() {
        let with_oidc = ConsoleValues {
            console_oidc_issuer: Some("https://idp.example/realm".into()),
            console_oidc_client_id: Some("console".into()),
            console_public_url: Some("https://console.example/".into()),
            console_oidc_scopes: Some("openid checkpointd".into()),
            ..values(Some("127.0.0.1:8080"), 60)
        };
        let oidc = resolve(with_oidc.clone()).unwrap().unwrap().oidc.unwrap();
        assert_eq!(
            oidc.redirect_url,
            "https://console.example/sign-in/oidc/callback"
        );
        assert_eq!(oidc.provider_name, "idp.example");
        assert_eq!(oidc.scopes, ["checkpointd"]);
        assert_eq!(
            (oidc.role_claim.as_str(), oidc.tenant_claim.as_str()),
            ("role", "tenant_id")
        );
        let without_public_url = ConsoleValues {
            console_public_url: None,
            ..with_oidc.clone()
        };
        assert!(resolve(without_public_url).is_err());
        let client_without_issuer = ConsoleValues {
            console_oidc_issuer: None,
            ..with_oidc
        };
        assert!(resolve(client_without_issuer).is_err());
    }

    #[test]
    fn a_public_url_alone_is_kept_for_links_and_a_bad_one_is_refused() {
        let linked = ConsoleValues {
            console_public_url: Some("https://console.example/".into()),
            ..values(Some("127.0.0.1:8080"), 60)
        };
        let console = resolve(linked).unwrap().unwrap();
        assert!(console.oidc.is_none());
        assert_eq!(
            console.public_url.as_deref(),
            Some("https://console.example")
        );
        for bad in ["console.example", "ftp://console.example", "https://"] {
            let refused = resolve(ConsoleValues {
                console_public_url: Some(bad.into()),
                ..values(Some("127.0.0.1:8080"), 60)
            })
            .unwrap_err();
            assert!(refused.contains("--console-public-url"), "{bad}: {refused}");
        }
    }
}
