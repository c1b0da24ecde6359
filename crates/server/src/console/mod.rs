//! The web console: server-rendered pages on their own listener (`--console-listen`) for the
//! people who approve, inspect and repair what agents do. See docs/console.md.
//!
//! - [`session`]: sign-in sessions and their CSRF tokens.
//! - [`calls`]: every page reads and writes through the gRPC service implementations
//!   in-process, behind the same role table and tenant scoping as the gRPC port.
//! - [`gate`]: sign-in, sign-out, and the checks in front of every page and every change;
//!   [`oidc`]: sign-in through the organisation's OpenID Connect provider.
//! - [`pages`]: one module per page; [`html`] the shell and escaping; [`diff`] the line diff
//!   of two checkpoints' states; [`listener`] the HTTP(S) accept loop; [`live`] the event
//!   streams that refresh the inbox and a run page as the watch streams report changes.

mod assets;
pub mod calls;
pub mod diff;
mod gate;
pub mod html;
mod listener;
mod live;
pub mod oidc;
mod pages;
pub mod session;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use tokio::net::TcpListener;

use crate::config::ServerSettings;
use crate::grpc::auth::Authenticator;
use crate::service::Services;
use crate::shutdown::Shutdown;
use crate::transport::TlsReloader;
use calls::Calls;
use checkpointd_storage::keys::ApiKeyStore;
use oidc::OidcSignIn;
use session::SessionStore;

/// Everything a console request needs, shared by all of them.
pub struct Console {
    calls: Calls,
    sessions: SessionStore,
    auth: Arc<Authenticator>,
    keys: Arc<dyn ApiKeyStore>,
    session_ttl: Duration,
    /// Whether the console speaks TLS, so its cookie is marked `Secure`.
    secure: bool,
    /// Sign-in through an OpenID Connect provider, when configured.
    oidc: Option<OidcSignIn>,
}

/// How the console is reached from the handlers.
type Shared = Arc<Console>;

impl Console {
    /// A console over the server's own services and credentials. It needs authentication
    /// (someone must sign in), so `auth` is not optional.
    pub fn new(
        services: Services,
        settings: &ServerSettings,
        auth: Arc<Authenticator>,
        keys: Arc<dyn ApiKeyStore>,
        session_ttl: Duration,
        secure: bool,
        oidc: Option<OidcSignIn>,
    ) -> Self {
        Self {
            calls: Calls::new(services, settings),
            sessions: SessionStore::default(),
            auth,
            keys,
            session_ttl,
            secure,
            oidc,
        }
    }

    /// The console's routes.
    pub fn router(self) -> Router {
        Router::new()
            .route("/", get(pages::home))
            .route("/sign-in", get(gate::sign_in_page).post(gate::sign_in))
            .route("/sign-in/oidc", get(oidc::start))
            .route("/sign-in/oidc/callback", get(oidc::callback))
            .route("/sign-out", post(gate::sign_out))
            .route("/session", get(gate::session_status))
            .route("/inbox", get(pages::inbox::show))
            .route("/tasks", get(pages::tasks::show))
            .route("/tasks/{task_id}/{decision}", post(pages::tasks::change))
            .route("/tasks/{task_id}", get(pages::task::show))
            .route("/tasks/bulk", post(pages::task_bulk::apply))
            .route("/runs", get(pages::runs::show))
            .route("/runs/{run_id}", get(pages::run::show))
            .route("/runs/{run_id}/repair", post(pages::run::repair))
            .route(
                "/integrity",
                get(pages::integrity::show).post(pages::integrity::verify),
            )
            .route("/events/inbox", get(live::inbox))
            .route("/events/runs/{run_id}", get(live::run))
            .route("/assets/{name}", get(assets::serve))
            .fallback(pages::not_found)
            .layer(axum::middleware::map_response(gate::protective_headers))
            .with_state(Arc::new(self))
    }
}

/// Serves `console` on `listener` (with TLS when `tls` is set) until the shutdown begins.
pub fn serve(
    shutdown: &Shutdown,
    listener: TcpListener,
    console: Console,
    tls: Option<Arc<TlsReloader>>,
) {
    shutdown.spawn(listener::serve(
        listener,
        console.router(),
        tls,
        shutdown.token(),
    ));
}
