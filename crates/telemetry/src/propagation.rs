//! W3C `traceparent` across gRPC: clients inject it (the `checkpointd-client` crate's
//! interceptor), the server adopts it as the parent of the RPC's span. Without an exporter the
//! global propagator is a no-op.

use opentelemetry::Context;
use opentelemetry::propagation::Extractor;
use tonic::codegen::http::{HeaderMap, HeaderName};

/// The W3C trace context headers, named once: a lookup by `&str` parses and validates the name
/// on every call, and the propagator asks for these on every RPC.
const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let value = match key {
            "traceparent" => self.0.get(TRACEPARENT),
            "tracestate" => self.0.get(TRACESTATE),
            _ => self.0.get(key),
        };
        value.and_then(|value| value.to_str().ok())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extractor_finds_the_trace_context_headers_and_any_other() {
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", "00-abc-def-01".parse().unwrap());
        headers.insert("tracestate", "vendor=1".parse().unwrap());
        headers.insert("baggage", "k=v".parse().unwrap());
        let extractor = HeaderExtractor(&headers);
        assert_eq!(extractor.get("traceparent"), Some("00-abc-def-01"));
        assert_eq!(extractor.get("tracestate"), Some("vendor=1"));
        assert_eq!(extractor.get("baggage"), Some("k=v"));
        assert_eq!(extractor.get("absent"), None);
        assert_eq!(HeaderExtractor(&HeaderMap::new()).get("traceparent"), None);
    }
}
