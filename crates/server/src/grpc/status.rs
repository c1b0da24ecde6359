//! The one place an [`Error`] becomes a gRPC [`Status`]: its code, its `ErrorInfo` reason and
//! field or capability, and a message that never carries driver text.

use std::collections::HashMap;
use std::time::Instant;

use checkpointd_core::error::{Error, ErrorCode, Source, failure};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

mod throttle;

/// The `google.rpc.ErrorInfo` domain of every refusal.
pub const ERROR_DOMAIN: &str = "checkpointd";

/// The gRPC code of an error code: the same name.
pub fn grpc_code(code: ErrorCode) -> Code {
    match code {
        ErrorCode::InvalidArgument => Code::InvalidArgument,
        ErrorCode::NotFound => Code::NotFound,
        ErrorCode::AlreadyExists => Code::AlreadyExists,
        ErrorCode::FailedPrecondition => Code::FailedPrecondition,
        ErrorCode::ResourceExhausted => Code::ResourceExhausted,
        ErrorCode::Unauthenticated => Code::Unauthenticated,
        ErrorCode::PermissionDenied => Code::PermissionDenied,
        ErrorCode::DataLoss => Code::DataLoss,
        ErrorCode::Unavailable => Code::Unavailable,
        ErrorCode::Internal => Code::Internal,
    }
}

/// A status with `code`, `message` and an `ErrorInfo` detail carrying `reason`.
pub fn status_with_reason(
    code: Code,
    message: impl Into<String>,
    reason: &str,
    metadata: HashMap<String, String>,
) -> Status {
    Status::with_error_details(
        code,
        message,
        ErrorDetails::with_error_info(reason, ERROR_DOMAIN, metadata),
    )
}

/// The status a client receives for `error`. Storage and internal failures are logged here
/// (throttled per cause) and reach the client as a fixed message.
pub fn to_status(error: Error) -> Status {
    let (code, reason) = error.code_and_reason();
    let code = grpc_code(code);
    let mut metadata = HashMap::new();
    let message = match error {
        Error::InvalidField { field, message } => {
            metadata.insert("field".to_owned(), field);
            message
        }
        Error::CapabilityRequired {
            capability,
            message,
        } => {
            metadata.insert("capability".to_owned(), capability.to_owned());
            message
        }
        Error::ArgumentsMismatch {
            ref call_id,
            ref stored_digest,
            ref request_digest,
        } => {
            metadata.insert("call_id".to_owned(), call_id.clone());
            metadata.insert("stored_digest".to_owned(), stored_digest.clone());
            metadata.insert("request_digest".to_owned(), request_digest.clone());
            error.to_string()
        }
        Error::Unavailable { context, source } => {
            // The whole chain is both the log's detail and the throttle's cause, as the
            // driver's text alone was before it became a source.
            let detail = detail(&context, source.as_ref());
            if let Some(suppressed) = throttle::admit("unavailable", &detail, Instant::now()) {
                tracing::warn!(error = %detail, suppressed, "storage unavailable");
            }
            "storage is unavailable; retry later".to_owned()
        }
        Error::Internal { context, source } => {
            let detail = detail(&context, source.as_ref());
            if let Some(suppressed) = throttle::admit("internal", &detail, Instant::now()) {
                tracing::error!(error = %detail, suppressed, "internal error");
            }
            "internal error".to_owned()
        }
        other => other.to_string(),
    };
    status_with_reason(code, message, reason, metadata)
}

/// `context` and every error in `source`'s chain, for the log.
fn detail(context: &str, source: Option<&Source>) -> String {
    failure::detail(
        context,
        source.map(|source| &**source as &(dyn std::error::Error + 'static)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_text_never_reaches_the_client() {
        let refused = std::io::Error::other("connection refused to 10.0.0.1");
        let status = to_status(Error::unavailable_from("postgres at 10.0.0.1", refused));
        assert_eq!(status.code(), Code::Unavailable);
        assert!(!status.message().contains("10.0.0.1"));
        let missing = std::io::Error::other("relation \"x\" does not exist");
        let status = to_status(Error::internal_from("postgres 42P01", missing));
        assert_eq!(status.code(), Code::Internal);
        assert!(!status.message().contains("relation"));
        assert!(!status.message().contains("42P01"));
    }

    #[test]
    fn an_arguments_mismatch_names_the_call_and_both_digests() {
        let status = to_status(Error::ArgumentsMismatch {
            call_id: "step-1/search/0".into(),
            stored_digest: "a".repeat(64),
            request_digest: "b".repeat(64),
        });
        assert_eq!(status.code(), Code::AlreadyExists);
        let info = status.get_details_error_info().expect("error info");
        assert_eq!(info.reason, "ARGUMENTS_MISMATCH");
        let meta = |key: &str| info.metadata.get(key).cloned().unwrap_or_default();
        assert_eq!(meta("call_id"), "step-1/search/0");
        assert_eq!(meta("stored_digest"), "a".repeat(64));
        assert_eq!(meta("request_digest"), "b".repeat(64));
        for named in ["step-1/search/0", &"a".repeat(64), &"b".repeat(64)] {
            assert!(status.message().contains(named), "{}", status.message());
        }
    }

    #[test]
    fn every_status_carries_its_reason_and_a_field_when_known() {
        let status = to_status(Error::StaleEpoch("stale epoch 1".into()));
        assert_eq!(status.code(), Code::FailedPrecondition);
        let info = status.get_details_error_info().expect("error info");
        assert_eq!(
            (info.reason.as_str(), info.domain.as_str()),
            ("STALE_EPOCH", "checkpointd")
        );
        let status = to_status(Error::invalid("checksum", "upper-case hex"));
        assert_eq!(status.code(), Code::InvalidArgument);
        let info = status.get_details_error_info().expect("error info");
        assert_eq!(info.reason, "INVALID_ARGUMENT");
        assert_eq!(
            info.metadata.get("field").map(String::as_str),
            Some("checksum")
        );
        let status = to_status(Error::unavailable("10.0.0.1 refused"));
        assert_eq!(
            status.get_details_error_info().unwrap().reason,
            "UNAVAILABLE"
        );
        let status = to_status(Error::CapabilityRequired {
            capability: "CLIENT_CAPABILITY_IN_DOUBT_CALLS",
            message: "calls in doubt".into(),
        });
        assert_eq!(status.code(), Code::FailedPrecondition);
        let info = status.get_details_error_info().expect("error info");
        assert_eq!(info.reason, "CAPABILITY_REQUIRED");
        assert_eq!(
            info.metadata.get("capability").map(String::as_str),
            Some("CLIENT_CAPABILITY_IN_DOUBT_CALLS")
        );
    }
}
