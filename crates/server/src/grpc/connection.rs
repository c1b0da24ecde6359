//! What the server knows about one client connection: its limits, and whether a call is in
//! flight on it, so the composition root can close connections that sit idle.
//!
//! The accept loop ([`crate::app`]) attaches a [`ConnectionActivity`] to every connection it
//! accepts; [`ActivityLayer`] counts the calls on it, keeping a call in flight until its
//! response body has been sent, so a long server stream never looks idle.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use tonic::codegen::http::{Request, Response};
use tonic::codegen::{Body, Service};
use tonic::transport::server::TcpConnectInfo;

/// Calls in flight on one connection and when it last had none.
#[derive(Debug)]
pub struct ConnectionActivity {
    in_flight: AtomicU64,
    calls_started: AtomicU64,
    idle_since: Mutex<Instant>,
}

impl ConnectionActivity {
    /// A connection accepted at `now`, idle from then on.
    pub fn new(now: Instant) -> Self {
        Self {
            in_flight: AtomicU64::new(0),
            calls_started: AtomicU64::new(0),
            idle_since: Mutex::new(now),
        }
    }

    /// `None` while a call is in flight; otherwise the moment the connection became idle.
    pub fn idle_since(&self) -> Option<Instant> {
        let idle_since = self.lock_idle_since();
        (self.in_flight.load(Ordering::SeqCst) == 0).then_some(*idle_since)
    }

    /// Whether any call has started on the connection.
    pub fn has_started_a_call(&self) -> bool {
        self.calls_started.load(Ordering::SeqCst) > 0
    }

    /// Counts a call as in flight until the returned guard drops.
    pub fn begin_call(self: &Arc<Self>) -> CallGuard {
        self.calls_started.fetch_add(1, Ordering::SeqCst);
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        CallGuard(self.clone())
    }

    fn lock_idle_since(&self) -> std::sync::MutexGuard<'_, Instant> {
        self.idle_since
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One call in flight; the connection's idle clock restarts when the last one drops.
#[derive(Debug)]
pub struct CallGuard(Arc<ConnectionActivity>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        // Held across the decrement so `idle_since` never sees zero calls with a stale clock.
        let mut idle_since = self.0.lock_idle_since();
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            *idle_since = Instant::now();
        }
    }
}

/// The connect info of a connection the server's accept loop made: the TCP addresses tonic
/// knows, plus the connection's activity.
#[derive(Clone, Debug)]
pub struct ConnectionInfo {
    pub tcp: TcpConnectInfo,
    pub activity: Arc<ConnectionActivity>,
}

/// Counts every call as in flight on its connection until its response body is done.
#[derive(Clone, Copy, Debug, Default)]
pub struct ActivityLayer;

impl<S> tower_layer::Layer<S> for ActivityLayer {
    type Service = ActivityService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ActivityService(inner)
    }
}

/// See [`ActivityLayer`].
#[derive(Clone, Debug)]
pub struct ActivityService<S>(S);

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, B, R> Service<Request<B>> for ActivityService<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = Response<GuardedBody<R>>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let info = request.extensions().get::<ConnectionInfo>().cloned();
        let guard = info.map(|info| {
            // `Request::remote_addr` looks for tonic's own connect info.
            request.extensions_mut().insert(info.tcp);
            info.activity.begin_call()
        });
        let call = self.0.call(request);
        Box::pin(async move {
            let response = call.await?;
            Ok(response.map(|body| GuardedBody {
                body,
                _guard: guard,
            }))
        })
    }
}

/// A response body that keeps its call in flight until it is dropped.
#[derive(Debug)]
pub struct GuardedBody<R> {
    body: R,
    _guard: Option<CallGuard>,
}

impl<R: Body + Unpin> Body for GuardedBody<R> {
    type Data = R::Data;
    type Error = R::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_idle_only_while_no_call_is_in_flight() {
        let accepted = Instant::now();
        let activity = Arc::new(ConnectionActivity::new(accepted));
        assert_eq!(activity.idle_since(), Some(accepted));
        assert!(!activity.has_started_a_call());
        let first = activity.begin_call();
        let second = activity.begin_call();
        assert_eq!(activity.idle_since(), None);
        drop(first);
        assert_eq!(activity.idle_since(), None);
        drop(second);
        let idle_since = activity.idle_since().expect("idle again");
        assert!(idle_since >= accepted);
        assert!(activity.has_started_a_call());
    }
}
