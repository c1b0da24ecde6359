//! Tower layer for the gRPC server: adopts the caller's trace context and times each call.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use opentelemetry::context::FutureExt as _;
use tonic::codegen::Service;
use tonic::codegen::http::{Request, Response};

use super::metrics;
use super::propagation::remote_context;

/// Wraps every service of the server. Handlers open their span (`checkpoint.save`, ...) when
/// first polled; polling inside the caller's context makes that span the caller's child.
#[derive(Clone, Copy, Debug, Default)]
pub struct RpcLayer;

impl<S> tower_layer::Layer<S> for RpcLayer {
    type Service = RpcService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RpcService(inner)
    }
}

/// See [`RpcLayer`].
#[derive(Clone, Debug)]
pub struct RpcService<S>(S);

impl<S, B, R> Service<Request<B>> for RpcService<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let parent = remote_context(request.headers());
        let method = method_label(request.uri().path());
        let started = Instant::now();
        let call = self.0.call(request).with_context(parent);
        Box::pin(async move {
            let outcome = call.await;
            if let Ok(response) = &outcome {
                metrics::record_rpc(method, grpc_status(response), started.elapsed());
            }
            outcome
        })
    }
}

/// The request path for the services this server has; anything else is `other`, so a client
/// cannot grow the label set.
fn method_label(path: &str) -> String {
    const SERVED: [&str; 4] = [
        "/checkpoint.v1.",
        "/grpc.health.v1.",
        "/grpc.reflection.v1.",
        "/grpc.reflection.v1alpha.",
    ];
    if SERVED.iter().any(|prefix| path.starts_with(prefix)) && path.len() <= 128 {
        path.to_owned()
    } else {
        "other".to_owned()
    }
}

/// Errors travel as `grpc-status` in the headers (trailers-only); successes carry it in the
/// trailers, which come after this point, so a missing header reads as OK.
fn grpc_status<R>(response: &Response<R>) -> i64 {
    response
        .headers()
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_served_paths_become_method_labels() {
        let save = "/checkpoint.v1.CheckpointService/Save";
        assert_eq!(method_label(save), save);
        assert_eq!(
            method_label("/grpc.health.v1.Health/Check"),
            "/grpc.health.v1.Health/Check"
        );
        assert_eq!(method_label("/attacker.Chosen/Name"), "other");
        assert_eq!(
            method_label(&format!("/checkpoint.v1.{}", "x".repeat(200))),
            "other"
        );
    }

    #[test]
    fn a_missing_status_header_reads_as_ok() {
        let ok = Response::new(());
        assert_eq!(grpc_status(&ok), 0);
        let mut failed = Response::new(());
        failed
            .headers_mut()
            .insert("grpc-status", "9".parse().unwrap());
        assert_eq!(grpc_status(&failed), 9);
    }
}
