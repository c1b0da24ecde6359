//! A real webhook receiver for the tests: an HTTP server on a local port that checks every
//! request's Standard Webhooks signature with the `standardwebhooks` verifier and keeps what
//! arrived. It can take its time to answer (a slow receiver) or not listen at all for a while
//! (a receiver that is down).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use tokio::net::TcpListener;

/// One request as it arrived.
#[derive(Clone, Debug)]
pub struct Arrival {
    pub id: String,
    pub body: serde_json::Value,
    /// Whether the signature verified against the endpoint's secret.
    pub verified: bool,
}

#[derive(Default)]
struct Seen {
    arrivals: Vec<Arrival>,
    answered: usize,
}

#[derive(Clone)]
struct Shared {
    secret: Arc<Mutex<Option<String>>>,
    seen: Arc<Mutex<Seen>>,
    delay: Duration,
}

/// See the module documentation.
pub struct Receiver {
    pub addr: SocketAddr,
    shared: Shared,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Receiver {
    /// A receiver on a fresh local port, not listening yet: its URL can be given to an
    /// endpoint while it is "down".
    pub async fn reserve(delay: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        Self {
            addr,
            shared: Shared {
                secret: Arc::new(Mutex::new(None)),
                seen: Arc::new(Mutex::new(Seen::default())),
                delay,
            },
            server: None,
        }
    }

    /// A receiver listening at once.
    pub async fn start(delay: Duration) -> Self {
        let mut receiver = Self::reserve(delay).await;
        receiver.listen().await;
        receiver
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// The secret signatures are checked against, as `CreateWebhookEndpoint` showed it.
    pub fn expect_secret(&self, secret: &str) {
        *self.shared.secret.lock().unwrap() = Some(secret.to_owned());
    }

    /// Starts listening on the reserved port.
    pub async fn listen(&mut self) {
        let listener = TcpListener::bind(self.addr).await.unwrap();
        let app = Router::new()
            .route("/hook", post(receive))
            .with_state(self.shared.clone());
        self.server = Some(tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        }));
    }

    pub fn arrivals(&self) -> Vec<Arrival> {
        self.shared.seen.lock().unwrap().arrivals.clone()
    }

    /// Requests answered so far (a slow receiver answers after its delay).
    pub fn answered(&self) -> usize {
        self.shared.seen.lock().unwrap().answered
    }

    /// The distinct event ids that arrived.
    pub fn ids(&self) -> std::collections::BTreeSet<String> {
        self.arrivals().into_iter().map(|a| a.id).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}

async fn receive(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let verified = shared
        .secret
        .lock()
        .unwrap()
        .as_deref()
        .is_some_and(|secret| {
            standardwebhooks::Webhook::new(secret)
                .unwrap()
                .verify(&body, &headers)
                .is_ok()
        });
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    shared
        .seen
        .lock()
        .unwrap()
        .arrivals
        .push(Arrival { id, body, verified });
    tokio::time::sleep(shared.delay).await;
    shared.seen.lock().unwrap().answered += 1;
    StatusCode::NO_CONTENT
}
