//! Authentication and authorisation of every call, in one layer in front of the services.
//!
//! For each call the layer: lets health and reflection through; reads `authorization: Bearer
//! <token>` and turns it into an [`Identity`] (API key or JWT); checks the method against the
//! role table ([`roles`]); resolves the tenant the call runs in from the identity and
//! `x-tenant-id`; and puts both, as a [`CallContext`], in the request's extensions, where
//! [`crate::grpc::tenant`] reads them. A call refused here reaches no service code, so nothing
//! is read or written for it. With auth `none` the identity is [`Identity::anonymous`] and the
//! tenant is the header's or `default`, as before authentication existed.

pub mod jwks_fetch;
pub mod jwt;
pub mod jwt_cache;
pub mod key_gate;
pub mod roles;
pub mod setup_error;
pub mod verified_keys;

use crate::config::AuthSettings;
use crate::grpc::status::to_status;
use crate::outbound::OutboundHttp;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;

use tonic::codegen::Service;
use tonic::codegen::http::{HeaderMap, Request, Response};

pub use jwt::{JwtKeys, JwtSettings, JwtVerifier};
pub use roles::{Access, access, allows};
pub use setup_error::AuthSetupError;

use checkpointd_core::domain::{Identity, PresentedKey, Tenant};
use checkpointd_core::error::Error;
use checkpointd_protocol::TENANT_HEADER;
use checkpointd_storage::keys::ApiKeyStore;
use key_gate::{Found, KeyGate};

/// What the auth layer established about a call, for the services to read.
#[derive(Clone, Debug)]
pub struct CallContext {
    pub identity: Identity,
    /// The tenant every read and write of the call is scoped to.
    pub tenant: Tenant,
}

/// The one message for every credential that does not verify, whatever the reason.
const UNAUTHENTICATED: &str = "missing or invalid credential: send `authorization: Bearer <token>`";

/// Verifies bearer tokens.
pub struct Authenticator {
    keys: Option<KeyGate>,
    jwt: Option<JwtVerifier>,
}

impl Authenticator {
    /// The verifier `settings` describe, or `None` for auth `none`. Reads the JWT secret or
    /// JWKS now, so a bad one stops startup.
    /// `http` fetches a JWKS URL.
    pub async fn new(
        settings: &AuthSettings,
        keys: Arc<dyn ApiKeyStore>,
        http: &OutboundHttp,
    ) -> Result<Option<Arc<Self>>, AuthSetupError> {
        if settings.is_none() {
            return Ok(None);
        }
        let jwt = match &settings.jwt {
            Some(jwt) => Some(JwtVerifier::new(jwt.clone(), http.clone()).await?),
            None => None,
        };
        Ok(Some(Arc::new(Self {
            keys: settings
                .api_keys
                .then(|| KeyGate::new(keys, settings.api_key_cache_ttl)),
            jwt,
        })))
    }

    /// The identity the request's bearer token proves.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Identity, Error> {
        let refused = |why: &str| {
            tracing::debug!(reason = why, "credential refused");
            Error::Unauthenticated(UNAUTHENTICATED.into())
        };
        let token = headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .ok_or_else(|| refused("no bearer token"))?;
        if let Some(jwt) = &self.jwt
            && jwt::looks_like_jwt(token)
        {
            return jwt
                .verify(token)
                .await
                .map_err(|rejected| refused(&rejected.0));
        }
        let Some(keys) = &self.keys else {
            return Err(refused("not a JWT"));
        };
        let presented = PresentedKey::parse(token).ok_or_else(|| refused("not an API key"))?;
        // A key whose secret is right is read once per `--api-key-cache-ttl` (sooner when its
        // store tells of a change); forged ones reach the database only a few times a window
        // (`key_gate`).
        let key = match keys.find(&presented).await? {
            Found::Key(key) => key,
            Found::Refused(why) => return Err(refused(why)),
        };
        if key
            .revoked_at
            .is_some_and(|revoked| revoked <= SystemTime::now())
        {
            return Err(refused("revoked key"));
        }
        Ok(key.identity())
    }
}

/// Authenticates and authorises every call; see the module documentation.
#[derive(Clone, Default)]
pub struct AuthLayer {
    auth: Option<Arc<Authenticator>>,
}

impl AuthLayer {
    /// `None`: auth `none`.
    pub fn new(auth: Option<Arc<Authenticator>>) -> Self {
        Self { auth }
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AuthService {
            inner,
            auth: self.auth.clone(),
        }
    }
}

/// See [`AuthLayer`].
#[derive(Clone)]
pub struct AuthService<S> {
    inner: S,
    auth: Option<Arc<Authenticator>>,
}

impl<S, B, R> Service<Request<B>> for AuthService<S>
where
    S: Service<Request<B>, Response = Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
    R: Default,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn std::future::Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        // The clone is ready because `self.inner` was polled ready; keep that one for this call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = self.auth.clone();
        Box::pin(async move {
            let access = roles::access(request.uri().path());
            if access == Access::Open {
                return inner.call(request).await;
            }
            match admit(auth.as_deref(), access, request.headers()).await {
                Ok(context) => {
                    request.extensions_mut().insert(context);
                    inner.call(request).await
                }
                Err(error) => Ok(to_status(error).into_http()),
            }
        })
    }
}

/// The context of a call that may proceed, or why it may not.
async fn admit(
    auth: Option<&Authenticator>,
    access: Access,
    headers: &HeaderMap,
) -> Result<CallContext, Error> {
    let identity = match auth {
        None => Identity::anonymous(),
        Some(auth) => auth.authenticate(headers).await?,
    };
    // Without auth every method is reachable, as before; an unknown one is UNIMPLEMENTED.
    if identity.authenticated && !allows(access, identity.role) {
        return Err(Error::RoleForbidden(match access {
            Access::Unknown => "this method is not open to any credential".to_owned(),
            _ => format!("the {} role may not make this call", identity.role),
        }));
    }
    let requested = match headers.get(TENANT_HEADER) {
        None => None,
        Some(value) => {
            let text = value.to_str().map_err(|_| {
                Error::InvalidArgument(format!("{TENANT_HEADER} must be printable ASCII"))
            })?;
            Some(Tenant::parse(text)?)
        }
    };
    let tenant = identity.tenant_for(requested)?;
    Ok(CallContext { identity, tenant })
}
