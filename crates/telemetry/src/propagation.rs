//! W3C `traceparent` across gRPC: clients inject it (the `checkpointd-client` crate's
//! interceptor), the server adopts it as the parent of the RPC's span. Without an exporter the
//! global propagator is a no-op.

use opentelemetry::Context;
use opentelemetry::propagation::Extractor;
use tonic::codegen::http::HeaderMap;

struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|key| key.as_str()).collect()
    }
}

/// The trace context a request's headers carry (empty when none, or when export is off).
pub fn remote_context(headers: &HeaderMap) -> Context {
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(headers))
    })
}
