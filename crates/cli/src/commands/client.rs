//! The connection to the server, made through the client crate as the runner makes it (one
//! interceptor stamps tenant, credential and trace context on every call), and errors phrased
//! for an operator.

use std::fmt;
use std::time::Duration;

use checkpointd::proto::notification_service_client::NotificationServiceClient;
use checkpointd_client::error_chain;
use checkpointd_client::{
    CallHeaders, Checkpoints, ConnectError, InvalidTenant, Patience, Tasks, checkpoints, tasks,
};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Status};

use super::Connection;

/// How long connecting may take before the command gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one call may take; operator calls are single reads or transitions.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// What an operator command reports when it fails; printed by `main` as `checkpointd: ...`,
/// so a message shows the chain of any error it keeps as its source.
#[derive(Debug)]
pub enum CliError {
    /// The server answered with a gRPC status.
    Status { code: Code, message: String },
    /// No connection to the server at `url`; `hint` says what to check.
    Unreachable {
        url: String,
        hint: &'static str,
        source: tonic::transport::Error,
    },
    /// Anything else: bad flags, an answer missing what it should hold.
    Other(String),
}

/// The hint of an operator command that cannot reach its server.
const SERVE_HINT: &str =
    " (is `checkpointd serve` running there? set --server or CHECKPOINTD_SERVER)";

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status { code, message } => write!(f, "{}: {message}", code_name(*code)),
            Self::Unreachable { url, hint, source } => {
                write!(f, "cannot connect to {url}: {}{hint}", error_chain(source))
            }
            Self::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Unreachable { source, .. } => Some(source),
            Self::Status { .. } | Self::Other(_) => None,
        }
    }
}

/// The canonical upper-case name of a gRPC code, as `grpcurl` and `buf curl` print it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A connected channel plus what every request carries.
pub struct Client {
    channel: Channel,
    headers: CallHeaders,
    server: String,
}

impl Client {
    /// Connects eagerly, so an unreachable server is reported before any command runs.
    pub async fn connect(connection: &Connection) -> Result<Self, CliError> {
        let server = server_url(&connection.server)?;
        let dial = connection.dial.dial(&server).map_err(CliError::Other)?;
        let headers = CallHeaders::new(&dial, connection.tenant.as_deref()).map_err(
            |InvalidTenant(tenant)| {
                CliError::Other(format!(
                    "invalid --tenant {tenant:?}: it must be printable ASCII"
                ))
            },
        )?;
        let patience = Patience::once(CONNECT_TIMEOUT, CALL_TIMEOUT);
        let channel = dial.connect(&patience).await.map_err(|error| match error {
            ConnectError::Settings(message) => {
                CliError::Other(format!("{message} (expected e.g. http://127.0.0.1:50051)"))
            }
            ConnectError::Unreachable { source, .. } => CliError::Unreachable {
                url: format!("checkpointd at {server}"),
                hint: SERVE_HINT,
                source,
            },
        })?;
        Ok(Self {
            channel,
            headers,
            server,
        })
    }

    pub fn tasks(&self) -> Tasks {
        tasks(self.channel.clone(), self.headers.clone())
    }

    /// Webhook endpoints and deliveries, every call stamped like the others.
    pub fn notifications(
        &self,
    ) -> NotificationServiceClient<InterceptedService<Channel, CallHeaders>> {
        NotificationServiceClient::with_interceptor(self.channel.clone(), self.headers.clone())
    }

    pub fn checkpoints(&self) -> Checkpoints {
        checkpoints(self.channel.clone(), self.headers.clone())
    }

    /// Turns a failed call into an operator-facing error, with a hint where one helps.
    pub fn status(&self, status: Status) -> CliError {
        let code = status.code();
        let mut message = status.message().to_owned();
        match code {
            Code::Unimplemented => message.push_str(&format!(
                " (the server at {} does not serve this service; is it a checkpointd with a task queue?)",
                self.server
            )),
            Code::Unavailable if message.is_empty() || message.contains("transport") => {
                message.push_str(&format!(" (lost the connection to {})", self.server));
            }
            _ => {}
        }
        CliError::Status { code, message }
    }
}

/// The server URL to dial: `host:port` alone means plain `http://host:port`; `https://` is TLS.
pub(super) fn server_url(raw: &str) -> Result<String, CliError> {
    let trimmed = raw.trim().trim_end_matches('/');
    if trimmed.is_empty() {
        return Err(CliError::Other("--server must not be empty".to_owned()));
    }
    match trimmed.split_once("://") {
        None => Ok(format!("http://{trimmed}")),
        Some(("http" | "https", _)) => Ok(trimmed.to_owned()),
        Some((scheme, _)) => Err(CliError::Other(format!(
            "invalid --server URL {raw:?}: scheme {scheme:?} is not http or https \
             (expected e.g. http://127.0.0.1:50051)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_host_and_port_means_plain_http() {
        assert_eq!(
            server_url("127.0.0.1:50051").unwrap(),
            "http://127.0.0.1:50051"
        );
        assert_eq!(server_url("http://h:1/").unwrap(), "http://h:1");
        assert!(server_url("grpc://h:1").is_err());
        assert_eq!(server_url("https://h:1").unwrap(), "https://h:1");
    }

    #[test]
    fn a_status_prints_as_its_canonical_code_and_message() {
        let error = CliError::Status {
            code: Code::NotFound,
            message: "task 1 not found".to_owned(),
        };
        assert_eq!(error.to_string(), "NOT_FOUND: task 1 not found");
    }
}
