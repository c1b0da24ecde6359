//! Gives requests that never reach a handler the codes the README promises.
//!
//! tonic answers a body that is not a valid protobuf message with `INTERNAL` and one above the
//! decoding ceiling with `OUT_OF_RANGE`, before any service code runs. For a caller both are
//! its own bad input: `INVALID_ARGUMENT` and `RESOURCE_EXHAUSTED`, like every other refusal.
//! Those answers are trailers-only, so their status travels in the response headers, where
//! this layer rewrites it, adding the `ErrorInfo` reason every refusal carries.

use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::codegen::Service;
use tonic::codegen::http::{HeaderMap, Request, Response};
use tonic::{Code, Status};

use crate::grpc::status::status_with_reason;

/// How tonic's decoder words the failures this layer re-codes.
const MALFORMED_PREFIX: &str = "failed to decode Protobuf message";
const TOO_LARGE_PREFIX: &str = "Error, decoded message length too large";

/// See the module documentation.
#[derive(Clone, Copy, Debug, Default)]
pub struct WireStatusLayer;

impl<S> tower_layer::Layer<S> for WireStatusLayer {
    type Service = WireStatusService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WireStatusService(inner)
    }
}

/// See [`WireStatusLayer`].
#[derive(Clone, Debug)]
pub struct WireStatusService<S>(S);

impl<S, B, R> Service<Request<B>> for WireStatusService<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn std::future::Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let call = self.0.call(request);
        Box::pin(async move {
            let mut response = call.await?;
            recode(response.headers_mut());
            Ok(response)
        })
    }
}

/// Re-codes a decoder failure in trailers-only headers; leaves every other answer alone.
fn recode(headers: &mut HeaderMap) {
    let Some(status) = Status::from_header_map(headers) else {
        return;
    };
    let recoded = match status.code() {
        Code::Internal if status.message().starts_with(MALFORMED_PREFIX) => status_with_reason(
            Code::InvalidArgument,
            format!(
                "the request is not a valid protobuf message ({})",
                status.message()
            ),
            "INVALID_ARGUMENT",
            Default::default(),
        ),
        Code::OutOfRange if status.message().starts_with(TOO_LARGE_PREFIX) => status_with_reason(
            Code::ResourceExhausted,
            "the request is larger than the server accepts (--max-request-bytes)",
            "TOO_LARGE",
            Default::default(),
        ),
        _ => return,
    };
    // Only fails for text that is no header value, which neither message is.
    let _ = recoded.add_header(headers);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The status a client reads after tonic wrote `code` and `message` and the layer ran.
    fn answer(code: Code, message: &str) -> Status {
        let mut headers = HeaderMap::new();
        Status::new(code, message).add_header(&mut headers).unwrap();
        recode(&mut headers);
        Status::from_header_map(&headers).unwrap()
    }

    #[test]
    fn a_malformed_body_is_invalid_argument_and_an_oversized_one_resource_exhausted() {
        let malformed = answer(
            Code::Internal,
            "failed to decode Protobuf message: invalid wire type value: 7",
        );
        assert_eq!(malformed.code(), Code::InvalidArgument);
        assert!(
            malformed.message().contains("invalid wire type"),
            "{malformed:?}"
        );
        let oversized = answer(
            Code::OutOfRange,
            "Error, decoded message length too large: found 9 bytes, the limit is: 8 bytes",
        );
        assert_eq!(oversized.code(), Code::ResourceExhausted);
        use tonic_types::StatusExt;
        let reasons = [&malformed, &oversized].map(|status| {
            status
                .get_details_error_info()
                .map(|info| (info.reason, info.domain))
        });
        assert_eq!(
            reasons,
            [
                Some(("INVALID_ARGUMENT".to_owned(), "checkpointd".to_owned())),
                Some(("TOO_LARGE".to_owned(), "checkpointd".to_owned())),
            ]
        );
    }

    #[test]
    fn the_services_own_answers_are_left_alone() {
        assert_eq!(
            answer(Code::Internal, "internal error").code(),
            Code::Internal
        );
        assert_eq!(
            answer(Code::OutOfRange, "something else").code(),
            Code::OutOfRange
        );
        assert_eq!(answer(Code::NotFound, "no run").code(), Code::NotFound);
    }
}
