//! OpenID Connect sign-in to the console against a provider served over HTTPS by a test CA
//! (discovery, JWKS and token endpoint; the person's approval at the provider is played by the
//! test): PKCE, state and nonce checked, the ID token's claims mapped as the gRPC port maps a
//! JWT's, the refusals, and startup failing on a provider it cannot discover.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use checkpointd::app::App;
use checkpointd::config::{ConsoleSettings, OidcSettings, ServeConfig, ServerSettings};
use checkpointd_core::domain::Role;
use checkpointd_testkit::{HttpsServer, TestCa};
use jsonwebtoken::EncodingKey;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::http::{Reply, get};
use crate::auth::jwt::{jwks, rs256, rsa_key};
use crate::auth::{api_key_auth, task_awaiting_approval};
use crate::support::{TestApp, serve_config};

const CLIENT_ID: &str = "checkpointd-console";

/// The provider: discovery, keys and a token endpoint whose answer each test sets.
struct Provider {
    server: HttpsServer,
    ca: TestCa,
    /// The signing key and its `kid`.
    key: (EncodingKey, String),
    keys_dir: tempfile::TempDir,
}

impl Provider {
    async fn start() -> Self {
        let ca = TestCa::new("oidc test CA");
        let server = HttpsServer::start(&ca.server_cert("idp", &["127.0.0.1"])).await;
        let keys_dir = tempfile::tempdir().unwrap();
        let (key, jwk) = rsa_key(keys_dir.path(), "k1");
        let issuer = server.base_url();
        let discovery = json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/auth"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        });
        server.set(
            "/.well-known/openid-configuration",
            200,
            discovery.to_string(),
        );
        server.set("/jwks", 200, jwks(&[&jwk]));
        Self {
            server,
            ca,
            key: (key, "k1".into()),
            keys_dir,
        }
    }

    /// What the token endpoint answers next: an ID token with `claims` over the standard ones.
    fn will_issue(&self, nonce: &str, claims: Value) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mut token = json!({
            "iss": self.server.base_url(),
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
        });
        for (name, value) in claims.as_object().unwrap() {
            token[name] = value.clone();
        }
        let answer = json!({
            "access_token": "at",
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": rs256(&token, &self.key.0, &self.key.1),
        });
        self.server.set("/token", 200, answer.to_string());
    }

    /// Signs with a new key from now on, the only one its JWKS lists.
    fn rotate_key(&mut self, kid: &str) {
        let (key, jwk) = rsa_key(self.keys_dir.path(), kid);
        self.server.set("/jwks", 200, jwks(&[&jwk]));
        self.key = (key, kid.into());
    }

    fn settings(&self, redirect_base: &str) -> OidcSettings {
        OidcSettings {
            issuer: self.server.base_url(),
            client_id: CLIENT_ID.into(),
            client_secret_file: None,
            scopes: vec![],
            provider_name: "Test IdP".into(),
            redirect_url: format!("{redirect_base}/sign-in/oidc/callback"),
            role_claim: "role".into(),
            tenant_claim: "tenant_id".into(),
        }
    }
}

fn config(provider: &Provider) -> ServeConfig {
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    ServeConfig {
        server: ServerSettings {
            auth: api_key_auth(),
            outbound_ca_file: Some(provider.ca.ca_cert()),
            ..ServerSettings::default()
        },
        console: Some(ConsoleSettings {
            oidc: Some(provider.settings("http://console.test")),
            ..ConsoleSettings::new(loopback)
        }),
        ..ServeConfig::default()
    }
}

async fn app_with(provider: &Provider) -> TestApp {
    serve_config(config(provider)).await.0
}

/// A sign-in started in the console: the provider's authorization URL's parameters and the
/// sign-in cookie the browser got.
struct Started {
    params: Vec<(String, String)>,
    login_cookie: String,
}

impl Started {
    fn param(&self, name: &str) -> &str {
        let found = self.params.iter().find(|(key, _)| key == name);
        found.map(|(_, value)| value.as_str()).unwrap_or_default()
    }
}

async fn start(app: &TestApp) -> Started {
    let reply = get(app.console_addr.unwrap(), "/sign-in/oidc", None).await;
    assert_eq!(reply.status, 303, "{reply:?}");
    let location = reply.header("location").unwrap();
    let query = location.split_once('?').unwrap().1;
    let params = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect();
    let set = reply.header("set-cookie").unwrap();
    assert!(
        set.contains("SameSite=Lax") && set.contains("HttpOnly"),
        "{set}"
    );
    let login_cookie = set.split(';').next().unwrap().to_owned();
    Started {
        params,
        login_cookie,
    }
}

/// The provider's redirect back to the console with `code` and `state`.
async fn come_back(app: &TestApp, state: &str, cookie: Option<&str>) -> Reply {
    let path = format!("/sign-in/oidc/callback?code=the-code&state={state}");
    get(app.console_addr.unwrap(), &path, cookie).await
}

#[tokio::test]
async fn a_person_with_the_operator_claim_signs_in_with_pkce_and_lands_on_the_inbox() {
    let provider = Provider::start().await;
    let app = app_with(&provider).await;
    let agent = crate::auth::make_key(&app, Some("acme"), Role::Agent)
        .await
        .1;
    let task = task_awaiting_approval(&app, &agent, "oidc-run").await;
    let page = get(app.console_addr.unwrap(), "/sign-in", None).await;
    assert!(page.body.contains("Sign in with Test IdP"), "{}", page.body);
    assert!(
        page.body.contains(r#"name="api_key""#),
        "the break-glass form stays"
    );

    let started = start(&app).await;
    assert_eq!(started.param("code_challenge_method"), "S256");
    assert_eq!(started.param("client_id"), CLIENT_ID);
    assert!(started.param("redirect_uri").contains("console.test"));
    provider.will_issue(
        started.param("nonce"),
        json!({"sub": "alice", "role": "operator", "tenant_id": "acme"}),
    );
    let back = come_back(&app, started.param("state"), Some(&started.login_cookie)).await;
    assert_eq!(back.status, 200, "{back:?}");
    assert_eq!(back.header("refresh"), Some("0; url=/inbox"));
    let cookie = back.session_cookie().expect("a session cookie");
    assert!(cookie.starts_with("checkpointd_console="), "{cookie}");
    assert!(
        back.header("set-cookie")
            .unwrap()
            .contains("SameSite=Strict")
    );

    // The token request proved the PKCE verifier whose S256 the authorization URL carried.
    let token_request = provider
        .server
        .requests()
        .into_iter()
        .find(|request| request.target == "/token")
        .expect("a token request");
    let verifier = token_request
        .body
        .split('&')
        .find_map(|pair| pair.strip_prefix("code_verifier="))
        .expect("a code_verifier");
    let challenge =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier));
    assert_eq!(challenge, started.param("code_challenge"));

    let inbox = get(app.console_addr.unwrap(), "/inbox", Some(&cookie)).await;
    assert_eq!(inbox.status, 200);
    assert!(inbox.body.contains(&task.task_id), "{}", inbox.body);
    assert!(inbox.body.contains("in tenant <strong>acme</strong>"));
}

#[tokio::test]
async fn a_person_without_an_operator_or_admin_claim_is_refused() {
    let provider = Provider::start().await;
    let app = app_with(&provider).await;
    for claims in [
        json!({"sub": "bob", "tenant_id": "acme"}),
        json!({"sub": "bot", "role": "agent", "tenant_id": "acme"}),
        json!({"sub": "eve", "role": "operator"}),
    ] {
        let started = start(&app).await;
        provider.will_issue(started.param("nonce"), claims.clone());
        let back = come_back(&app, started.param("state"), Some(&started.login_cookie)).await;
        assert_eq!(back.status, 403, "{claims}: {back:?}");
        assert!(
            back.body.contains("no operator or admin role"),
            "{}",
            back.body
        );
        assert!(
            back.session_cookie()
                .is_none_or(|c| !c.starts_with("checkpointd_console=")),
            "no session for {claims}"
        );
    }
}

#[tokio::test]
async fn an_id_token_for_another_sign_in_or_a_callback_this_browser_did_not_start_is_refused() {
    let provider = Provider::start().await;
    let app = app_with(&provider).await;
    let operator = json!({"sub": "alice", "role": "operator", "tenant_id": "acme"});

    // The nonce of another sign-in: the ID token was not issued for this one.
    let started = start(&app).await;
    provider.will_issue("another-nonce", operator.clone());
    let back = come_back(&app, started.param("state"), Some(&started.login_cookie)).await;
    assert_eq!(back.status, 401, "{back:?}");

    // A state the browser's cookie does not name (login CSRF), and no cookie at all.
    let started = start(&app).await;
    provider.will_issue(started.param("nonce"), operator.clone());
    let other = start(&app).await;
    let crossed = come_back(&app, started.param("state"), Some(&other.login_cookie)).await;
    assert_eq!(crossed.status, 400, "{crossed:?}");
    let cookieless = come_back(&app, started.param("state"), None).await;
    assert_eq!(cookieless.status, 400, "{cookieless:?}");
    // The refusals left the sign-in usable; once used, it cannot be replayed.
    let back = come_back(&app, started.param("state"), Some(&started.login_cookie)).await;
    assert_eq!(back.status, 200, "{back:?}");
    let replayed = come_back(&app, started.param("state"), Some(&started.login_cookie)).await;
    assert_eq!(replayed.status, 400, "{replayed:?}");
}

#[tokio::test]
async fn a_provider_that_rotated_its_signing_key_still_signs_people_in_without_a_restart() {
    let mut provider = Provider::start().await;
    let app = app_with(&provider).await;
    provider.rotate_key("k2");
    let started = start(&app).await;
    let operator = json!({"sub": "alice", "role": "operator", "tenant_id": "acme"});
    provider.will_issue(started.param("nonce"), operator);
    let back = come_back(&app, started.param("state"), Some(&started.login_cookie)).await;
    assert_eq!(back.status, 200, "{back:?}");
    let jwks_reads = provider
        .server
        .requests()
        .iter()
        .filter(|r| r.target == "/jwks")
        .count();
    assert_eq!(
        jwks_reads, 2,
        "read at discovery and once more for the unknown key"
    );
}

#[tokio::test]
async fn startup_fails_on_a_provider_it_cannot_discover_or_whose_ca_it_does_not_trust() {
    let provider = Provider::start().await;
    let untrusted = ServeConfig {
        server: ServerSettings {
            auth: api_key_auth(),
            ..ServerSettings::default()
        },
        ..config(&provider)
    };
    let error = App::build(untrusted).await.err().expect("startup fails");
    let text = error.to_string();
    assert!(text.contains("cannot discover"), "{text}");
    assert!(text.contains("certificate"), "{text}");

    provider
        .server
        .set("/.well-known/openid-configuration", 404, "{}");
    let error = App::build(config(&provider))
        .await
        .err()
        .expect("startup fails");
    assert!(error.to_string().contains("cannot discover"), "{error}");
}
