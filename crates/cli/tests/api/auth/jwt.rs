//! JWTs minted here: HS256 against a secret file, RS256 against a JWKS file and a JWKS URL
//! served by a small local HTTP server, with keys generated at test time and rotated mid-test.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use checkpointd::config::AuthSettings;
use checkpointd::grpc::auth::jwt::CLOCK_LEEWAY;
use checkpointd::grpc::auth::{JwtKeys, JwtSettings};
use checkpointd::proto::ApproveRequest;
use checkpointd_core::domain::Role;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tonic::Code;

use super::{
    assert_unauthenticated, bearer, latest_step, make_key, save_as, spawn_with_auth,
    task_awaiting_approval,
};
use crate::support::{Backend, TestApp, wait_until};

const ISSUER: &str = "https://issuer.test";
const AUDIENCE: &str = "checkpointd";
const SECRET: &str = "an-hs256-secret-of-at-least-32-bytes!!";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims of a token valid for an hour, for `tenant` and `role`.
fn claims(sub: &str, tenant: &str, role: &str) -> Value {
    json!({
        "sub": sub,
        "iss": ISSUER,
        "aud": AUDIENCE,
        "exp": now() + 3600,
        "iat": now(),
        "tenant_id": tenant,
        "role": role,
    })
}

fn hs256(claims: &Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

fn jwt_auth(keys: JwtKeys, refresh: Duration) -> AuthSettings {
    AuthSettings {
        api_keys: false,
        jwt: Some(JwtSettings {
            keys,
            issuer: Some(ISSUER.into()),
            audience: Some(AUDIENCE.into()),
            tenant_claim: "tenant_id".into(),
            role_claim: "role".into(),
            jwks_refresh: refresh,
        }),
        allow_unauthenticated: false,
        ..AuthSettings::default()
    }
}

async fn secret_app(dir: &Path, api_keys: bool) -> TestApp {
    let path = dir.join("jwt.secret");
    std::fs::write(&path, format!("{SECRET}\n")).unwrap();
    let mut auth = jwt_auth(JwtKeys::SecretFile(path), Duration::from_secs(300));
    auth.api_keys = api_keys;
    spawn_with_auth(Backend::Memory, auth).await
}

#[tokio::test]
async fn wrong_expired_wrong_audience_issuer_or_signature_tokens_are_unauthenticated() {
    let dir = tempfile::tempdir().unwrap();
    let app = secret_app(dir.path(), false).await;
    let good = hs256(&claims("agent-7", "acme", "agent"), SECRET);
    save_as(&app, &good, None, "run-1", 1).await.unwrap();

    let with = |change: &dyn Fn(&mut Value)| {
        let mut claims = claims("agent-7", "acme", "agent");
        change(&mut claims);
        hs256(&claims, SECRET)
    };
    let expired = with(&|c| c["exp"] = json!(now() - 3600));
    let wrong_audience = with(&|c| c["aud"] = json!("someone-else"));
    let wrong_issuer = with(&|c| c["iss"] = json!("https://evil.test"));
    let no_role = with(&|c| drop(c.as_object_mut().unwrap().remove("role")));
    let all_tenants_agent = with(&|c| c["tenant_id"] = json!("*"));
    let wrong_signature = hs256(
        &claims("agent-7", "acme", "agent"),
        "another-secret-of-at-least-32-bytes!!!",
    );
    let unsigned = format!("{}.", good.rsplit_once('.').unwrap().0);
    for token in [
        expired,
        wrong_audience,
        wrong_issuer,
        no_role,
        all_tenants_agent,
        wrong_signature,
        unsigned,
        "a.b.c".to_owned(),
    ] {
        let status = latest_step(&app, Some(&token), "run-1").await.unwrap_err();
        assert_unauthenticated(&status);
    }
    assert_unauthenticated(&latest_step(&app, None, "run-1").await.unwrap_err());
    assert_eq!(latest_step(&app, Some(&good), "run-1").await.unwrap(), 1);
}

#[tokio::test]
async fn a_token_not_yet_valid_is_refused_beyond_the_clock_leeway_and_accepted_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let app = secret_app(dir.path(), false).await;
    let leeway = CLOCK_LEEWAY.as_secs();
    let with_nbf = |nbf: u64| {
        let mut claims = claims("agent-7", "acme", "agent");
        claims["nbf"] = json!(nbf);
        hs256(&claims, SECRET)
    };
    // Well beyond the leeway, and just beyond it (a slow second cannot bring it within).
    for nbf in [now() + 3600, now() + leeway + 30] {
        let status = save_as(&app, &with_nbf(nbf), None, "run-1", 1)
            .await
            .unwrap_err();
        assert_unauthenticated(&status);
        assert_eq!(reason(&status), "CREDENTIAL_INVALID");
    }
    // A token from an issuer whose clock runs a little ahead, and one valid since a minute ago.
    save_as(&app, &with_nbf(now() + leeway / 2), None, "run-1", 1)
        .await
        .unwrap();
    assert_eq!(
        latest_step(&app, Some(&with_nbf(now() - 60)), "run-1")
            .await
            .unwrap(),
        1
    );
    // Expiry gets the same leeway: expired half of it ago still passes, twice it ago does not.
    let with_exp = |exp: u64| {
        let mut claims = claims("agent-7", "acme", "agent");
        claims["exp"] = json!(exp);
        hs256(&claims, SECRET)
    };
    assert!(
        latest_step(&app, Some(&with_exp(now() - leeway / 2)), "run-1")
            .await
            .is_ok()
    );
    let status = latest_step(&app, Some(&with_exp(now() - 2 * leeway)), "run-1")
        .await
        .unwrap_err();
    assert_unauthenticated(&status);
}

/// The machine-readable reason of a refusal.
fn reason(status: &tonic::Status) -> String {
    use tonic_types::StatusExt;
    status
        .get_details_error_info()
        .map(|info| info.reason)
        .unwrap_or_default()
}

#[tokio::test]
async fn a_jwt_is_bound_to_its_tenant_claim_and_its_role_decides_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let app = secret_app(dir.path(), true).await;
    let agent = hs256(&claims("agent-7", "acme", "agent"), SECRET);
    let operator = hs256(&claims("alice@acme", "acme", "operator"), SECRET);
    let admin = hs256(&claims("root", "*", "admin"), SECRET);
    save_as(&app, &admin, Some("globex"), "their-run", 2)
        .await
        .unwrap();

    let status = save_as(&app, &agent, Some("globex"), "their-run", 3)
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let mut client = app.client().await;
    let load = checkpointd::proto::LoadLatestRequest {
        run_id: "their-run".into(),
        ..Default::default()
    };
    let theirs = client
        .load_latest(bearer(Some(&admin), Some("globex"), load))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(theirs.checkpoint.unwrap().step, 2, "globex is untouched");

    let parked = task_awaiting_approval(&app, &agent, "deploy").await;
    let mut tasks = app.tasks().await;
    let approve = ApproveRequest {
        task_id: parked.task_id,
        decided_by: String::new(),
        comment: String::new(),
    };
    let status = tasks
        .approve(bearer(Some(&agent), None, approve.clone()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let approval = tasks
        .approve(bearer(Some(&operator), None, approve))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap()
        .approval
        .unwrap();
    assert_eq!(approval.decided_by, "alice@acme");
    assert_eq!(approval.comment, "");

    // With both modes on, an API key still works beside the JWTs.
    let (_, key) = make_key(&app, Some("acme"), Role::Agent).await;
    save_as(&app, &key, None, "keyed-run", 1).await.unwrap();
}

/// An RSA key pair made by `openssl` for this test, as an encoding key and its public JWK.
pub(crate) fn rsa_key(dir: &Path, kid: &str) -> (EncodingKey, Jwk) {
    let path: PathBuf = dir.join(format!("{kid}.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&path)
        .output()
        .expect("run openssl");
    assert!(made.status.success(), "openssl: {made:?}");
    let encoding = EncodingKey::from_rsa_pem(&std::fs::read(&path).unwrap()).unwrap();
    let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::RS256).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    (encoding, jwk)
}

pub(crate) fn rs256(claims: &Value, key: &EncodingKey, kid: &str) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

pub(crate) fn jwks(keys: &[&Jwk]) -> String {
    serde_json::to_string(&JwkSet {
        keys: keys.iter().map(|key| (*key).clone()).collect(),
    })
    .unwrap()
}

/// Whether `token` is accepted for a LoadLatest (NOT_FOUND: accepted, for an empty run).
async fn accepted(app: &TestApp, token: &str) -> bool {
    match latest_step(app, Some(token), "probe").await {
        Ok(_) => true,
        Err(status) if status.code() == Code::NotFound => true,
        Err(status) => {
            assert_unauthenticated(&status);
            false
        }
    }
}

/// Serves whatever `document` holds at `/jwks` over HTTP on a loopback port.
async fn serve_jwks(document: Arc<Mutex<String>>) -> String {
    let router = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let document = document.clone();
            async move {
                let body = document.lock().unwrap().clone();
                ([("content-type", "application/json")], body)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}/jwks")
}

#[tokio::test]
async fn a_jwks_served_over_http_is_refetched_when_a_new_key_appears_and_an_old_one_goes() {
    let dir = tempfile::tempdir().unwrap();
    let (old_key, old_jwk) = rsa_key(dir.path(), "old");
    let (new_key, new_jwk) = rsa_key(dir.path(), "new");
    let document = Arc::new(Mutex::new(jwks(&[&old_jwk])));
    let url = serve_jwks(document.clone()).await;
    let app = spawn_with_auth(
        Backend::Memory,
        jwt_auth(JwtKeys::JwksUrl(url), Duration::from_millis(500)),
    )
    .await;
    let by_old = rs256(&claims("svc", "acme", "agent"), &old_key, "old");
    let by_new = rs256(&claims("svc", "acme", "agent"), &new_key, "new");
    assert!(accepted(&app, &by_old).await);
    assert!(!accepted(&app, &by_new).await, "not yet published");
    // A token signed by the new key but claiming the old key's id fails its signature.
    let forged = rs256(&claims("svc", "acme", "agent"), &new_key, "old");
    assert!(!accepted(&app, &forged).await);

    // Rotation: the provider publishes the new key and withdraws the old one; the server
    // follows without a restart.
    *document.lock().unwrap() = jwks(&[&new_jwk]);
    wait_until("the new key is accepted", || accepted(&app, &by_new)).await;
    wait_until("the withdrawn key is refused", || async {
        !accepted(&app, &by_old).await
    })
    .await;
}

#[tokio::test]
async fn a_jwks_file_is_read_again_so_keys_rotate_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (old_key, old_jwk) = rsa_key(dir.path(), "k1");
    let (new_key, new_jwk) = rsa_key(dir.path(), "k2");
    let path = dir.path().join("jwks.json");
    std::fs::write(&path, jwks(&[&old_jwk])).unwrap();
    let app = spawn_with_auth(
        Backend::Memory,
        jwt_auth(JwtKeys::JwksFile(path.clone()), Duration::from_millis(300)),
    )
    .await;
    let by_old = rs256(&claims("svc", "acme", "operator"), &old_key, "k1");
    let by_new = rs256(&claims("svc", "acme", "operator"), &new_key, "k2");
    assert!(accepted(&app, &by_old).await);
    // An HS256 token made with the public key as its secret (algorithm confusion) is refused.
    let confused = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims("svc", "acme", "admin"),
        &EncodingKey::from_secret(jwks(&[&old_jwk]).as_bytes()),
    )
    .unwrap();
    assert!(!accepted(&app, &confused).await);

    std::fs::write(&path, jwks(&[&new_jwk])).unwrap();
    wait_until("the rotated key is accepted", || accepted(&app, &by_new)).await;
    wait_until("the old key is refused", || async {
        !accepted(&app, &by_old).await
    })
    .await;
}
