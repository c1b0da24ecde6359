//! The one interceptor every call goes through: the tenant, the credential and the caller's
//! trace context, stamped the same way by the runner and the CLI.

use checkpointd_protocol::TENANT_HEADER;
use tonic::metadata::{AsciiMetadataValue, MetadataMap};
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::dial::{AUTHORIZATION_HEADER, Dial};
use crate::trace_context;

/// A tenant that cannot travel as a header: gRPC metadata carries printable ASCII only.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tenant {0:?} is not a valid header value")]
pub struct InvalidTenant(pub String);

/// Adds `x-tenant-id` to each request when a tenant is configured, `authorization` when the
/// dial has a credential, and the current span's W3C `traceparent` when trace export is on.
/// The credential is marked sensitive, so `Debug` never prints it.
#[derive(Clone, Debug, Default)]
pub struct CallHeaders {
    tenant: Option<AsciiMetadataValue>,
    authorization: Option<AsciiMetadataValue>,
}

impl CallHeaders {
    /// The headers of calls made through `dial` (its credential, if any) as `tenant`, refusing a
    /// tenant that is not printable ASCII before any call is made.
    pub fn new(dial: &Dial, tenant: Option<&str>) -> Result<Self, InvalidTenant> {
        let tenant = match tenant {
            // Header parsing accepts bytes above 0x7f (obs-text), which the server refuses as a
            // tenant: refused here, once, instead of on every call.
            Some(tenant) if !tenant.is_ascii() => return Err(InvalidTenant(tenant.to_owned())),
            Some(tenant) => Some(
                tenant
                    .parse()
                    .map_err(|_| InvalidTenant(tenant.to_owned()))?,
            ),
            None => None,
        };
        Ok(Self {
            tenant,
            ..Self::for_dial(dial)
        })
    }

    /// The headers of calls that name no tenant (a health check): the dial's credential and
    /// the trace context only.
    pub fn for_dial(dial: &Dial) -> Self {
        Self {
            tenant: None,
            authorization: dial.authorization().cloned(),
        }
    }

    /// Writes the headers into one request's metadata: for a call that is not made through a
    /// client built with the interceptor (a health check, say).
    pub fn stamp(&self, metadata: &mut MetadataMap) {
        if let Some(tenant) = &self.tenant {
            metadata.insert(TENANT_HEADER, tenant.clone());
        }
        if let Some(authorization) = &self.authorization {
            metadata.insert(AUTHORIZATION_HEADER, authorization.clone());
        }
        trace_context::inject_current(metadata);
    }
}

impl Interceptor for CallHeaders {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        self.stamp(request.metadata_mut());
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;
    use crate::dial::DialArgs;

    fn dial_with_token(token: &str) -> Dial {
        DialArgs {
            token: Some(token.into()),
            ..DialArgs::default()
        }
        .dial("http://127.0.0.1:1")
        .unwrap()
    }

    fn stamped(headers: &mut CallHeaders) -> MetadataMap {
        headers.call(Request::new(())).unwrap().metadata().clone()
    }

    #[test]
    fn every_request_carries_the_tenant_and_the_credential() {
        let mut headers = CallHeaders::new(&dial_with_token("tok-1"), Some("acme")).unwrap();
        let metadata = stamped(&mut headers);
        assert_eq!(metadata.get(TENANT_HEADER).unwrap(), "acme");
        assert_eq!(metadata.get(AUTHORIZATION_HEADER).unwrap(), "Bearer tok-1");
        assert!(!format!("{headers:?}").contains("tok-1"));
    }

    #[test]
    fn a_call_without_a_tenant_still_carries_the_credential() {
        let mut headers = CallHeaders::for_dial(&dial_with_token("tok-2"));
        let metadata = stamped(&mut headers);
        assert!(metadata.get(TENANT_HEADER).is_none());
        assert_eq!(metadata.get(AUTHORIZATION_HEADER).unwrap(), "Bearer tok-2");
    }

    #[test]
    fn no_tenant_and_no_token_add_no_header() {
        let mut headers =
            CallHeaders::new(&Dial::plain("http://127.0.0.1:1").unwrap(), None).unwrap();
        let metadata = stamped(&mut headers);
        assert!(metadata.get(TENANT_HEADER).is_none());
        assert!(metadata.get(AUTHORIZATION_HEADER).is_none());
    }

    #[test]
    fn a_tenant_that_is_not_printable_ascii_is_refused() {
        let dial = Dial::plain("http://127.0.0.1:1").unwrap();
        for tenant in ["ténant", "a\nb", "tab\u{7f}"] {
            assert_eq!(
                CallHeaders::new(&dial, Some(tenant)).unwrap_err(),
                InvalidTenant(tenant.to_owned()),
                "{tenant:?}"
            );
        }
        assert_eq!(
            InvalidTenant("a\nb".into()).to_string(),
            r#"tenant "a\nb" is not a valid header value"#
        );
    }

    #[test]
    fn a_call_inside_a_traced_span_carries_its_traceparent() {
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        let provider = SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let mut headers = CallHeaders::default();
        let metadata = tracing::subscriber::with_default(subscriber, || {
            let _span = tracing::info_span!("step").entered();
            stamped(&mut headers)
        });
        let traceparent = metadata
            .get("traceparent")
            .expect("traceparent")
            .to_str()
            .unwrap();
        assert!(traceparent.starts_with("00-"), "{traceparent}");
        assert_eq!(traceparent.split('-').count(), 4, "{traceparent}");
    }
}
