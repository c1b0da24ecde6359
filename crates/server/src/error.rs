//! One error type for the whole service, and the one place that maps it to gRPC status codes.

use std::time::Instant;

use tonic::{Code, Status};

mod throttle;

/// Everything that can go wrong in checkpointd, classified by what the caller should do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// A stale fencing epoch, a lost lease, or a write that the run's state forbids.
    #[error("{0}")]
    FailedPrecondition(String),
    #[error("{0}")]
    TooLarge(String),
    /// Stored data failed its checksum.
    #[error("{0}")]
    DataLoss(String),
    /// The database cannot be reached; the detail is logged, never sent to clients.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The server has no room for the call right now (its request budget is spent); the caller
    /// may retry. Not logged per call: an overload would flood the log.
    #[error("{0}")]
    Overloaded(String),
    /// A bug or an unexpected driver failure; the detail is logged, never sent to clients.
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        match error {
            Error::InvalidArgument(msg) => Status::new(Code::InvalidArgument, msg),
            Error::NotFound(msg) => Status::new(Code::NotFound, msg),
            Error::Conflict(msg) => Status::new(Code::AlreadyExists, msg),
            Error::FailedPrecondition(msg) => Status::new(Code::FailedPrecondition, msg),
            Error::TooLarge(msg) => Status::new(Code::ResourceExhausted, msg),
            Error::DataLoss(msg) => Status::new(Code::DataLoss, msg),
            Error::Unavailable(detail) => {
                if let Some(suppressed) = throttle::admit("unavailable", &detail, Instant::now()) {
                    tracing::warn!(error = %detail, suppressed, "storage unavailable");
                }
                Status::new(Code::Unavailable, "storage is unavailable; retry later")
            }
            Error::Overloaded(msg) => Status::new(Code::Unavailable, msg),
            Error::Internal(detail) => {
                if let Some(suppressed) = throttle::admit("internal", &detail, Instant::now()) {
                    tracing::error!(error = %detail, suppressed, "internal error");
                }
                Status::new(Code::Internal, "internal error")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_text_never_reaches_the_client() {
        let status = Status::from(Error::Unavailable("connection refused to 10.0.0.1".into()));
        assert_eq!(status.code(), Code::Unavailable);
        assert!(!status.message().contains("10.0.0.1"));
        let status = Status::from(Error::Internal("relation \"x\" does not exist".into()));
        assert_eq!(status.code(), Code::Internal);
        assert!(!status.message().contains("relation"));
    }
}
