//! Tells fatal errors from transient ones: typed errors first, then message patterns.

use tonic::Code;

use crate::agent_error::AgentError;
use crate::proto;

/// Whether retrying can help; the queue retries transient failures and parks fatal ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// Will fail again on retry.
    Fatal,
    /// May succeed on retry.
    Transient,
}

impl ErrorClass {
    /// The class as `Fail` carries it.
    pub fn to_wire(self) -> proto::ErrorClass {
        match self {
            ErrorClass::Fatal => proto::ErrorClass::Fatal,
            ErrorClass::Transient => proto::ErrorClass::Transient,
        }
    }
}

/// Message fragments that mark an untyped error as fatal by default (matched case-insensitively).
pub const DEFAULT_FATAL_PATTERNS: &[&str] = &[
    "credential",
    "unauthorized",
    "unauthenticated",
    "authentication",
    "invalid api key",
    "permission denied",
    "forbidden",
    "no module named",
    "module not found",
    "missing configuration",
    "not configured",
];

/// Classifies errors for the recovery loop.
#[derive(Clone, Debug)]
pub struct ErrorClassifier {
    fatal_patterns: Vec<String>,
}

impl Default for ErrorClassifier {
    fn default() -> Self {
        Self::new(DEFAULT_FATAL_PATTERNS.iter().map(|p| p.to_string()))
    }
}

impl ErrorClassifier {
    pub fn new(patterns: impl IntoIterator<Item = String>) -> Self {
        Self {
            fatal_patterns: patterns.into_iter().map(|p| p.to_lowercase()).collect(),
        }
    }

    pub fn classify(&self, error: &AgentError) -> ErrorClass {
        match error {
            AgentError::Fatal(_) => ErrorClass::Fatal,
            AgentError::Transient(_) => ErrorClass::Transient,
            AgentError::Rpc(status) => match status.code() {
                // The service refused the data or the caller: retrying sends the same thing.
                Code::InvalidArgument
                | Code::Unauthenticated
                | Code::PermissionDenied
                | Code::DataLoss
                | Code::ResourceExhausted => ErrorClass::Fatal,
                _ => ErrorClass::Transient,
            },
            AgentError::Other(message) => self.by_message(message),
            AgentError::ApprovalRequired { .. } => ErrorClass::Transient,
        }
    }

    fn by_message(&self, message: &str) -> ErrorClass {
        let message = message.to_lowercase();
        if self
            .fatal_patterns
            .iter()
            .any(|pattern| message.contains(pattern.as_str()))
        {
            ErrorClass::Fatal
        } else {
            ErrorClass::Transient
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_errors_win_and_patterns_classify_the_rest() {
        let classifier = ErrorClassifier::default();
        assert_eq!(
            classifier.classify(&AgentError::Transient("invalid credentials".into())),
            ErrorClass::Transient
        );
        assert_eq!(
            classifier.classify(&AgentError::Other(
                "Invalid Credentials for provider".into()
            )),
            ErrorClass::Fatal
        );
        assert_eq!(
            classifier.classify(&AgentError::Other(
                "ModuleNotFoundError: No module named 'x'".into()
            )),
            ErrorClass::Fatal
        );
        assert_eq!(
            classifier.classify(&AgentError::Other("connection reset by peer".into())),
            ErrorClass::Transient
        );
        assert_eq!(
            classifier.classify(&AgentError::Rpc(tonic::Status::unavailable("down"))),
            ErrorClass::Transient
        );
        let custom = ErrorClassifier::new(["quota exceeded".to_owned()]);
        assert_eq!(
            custom.classify(&AgentError::Other("Quota Exceeded".into())),
            ErrorClass::Fatal
        );
    }
}
