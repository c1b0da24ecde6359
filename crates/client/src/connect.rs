//! A channel to the server from a [`Dial`], with the caller's patience, and the two service
//! clients on it behind [`CallHeaders`].

use std::time::Duration;

use checkpointd_protocol::v1::checkpoint_service_client::CheckpointServiceClient;
use checkpointd_protocol::v1::task_service_client::TaskServiceClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::dial::Dial;
use crate::error_chain::error_chain;
use crate::headers::CallHeaders;

/// The largest message a client decodes (and the checkpoint client encodes): restored histories
/// can be large, and the server caps what it accepts, not what it sends.
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// The checkpoint service, every call stamped by [`CallHeaders`].
pub type Checkpoints = CheckpointServiceClient<InterceptedService<Channel, CallHeaders>>;
/// The task service, every call stamped by [`CallHeaders`].
pub type Tasks = TaskServiceClient<InterceptedService<Channel, CallHeaders>>;

/// The checkpoint service on `channel`, sized for whole histories.
pub fn checkpoints(channel: Channel, headers: CallHeaders) -> Checkpoints {
    CheckpointServiceClient::with_interceptor(channel, headers)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
}

/// The task service on `channel`, sized for tasks carrying large inputs.
pub fn tasks(channel: Channel, headers: CallHeaders) -> Tasks {
    TaskServiceClient::with_interceptor(channel, headers)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
}

/// How long connecting may take and how often it is tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patience {
    /// How long one connection attempt may take.
    pub connect_timeout: Duration,
    /// How long each call may take once connected (None: no limit).
    pub call_timeout: Option<Duration>,
    /// Connection attempts before giving up (at least one is made).
    pub attempts: u32,
    /// Pause after a failed attempt.
    pub pause: Duration,
}

impl Patience {
    /// A worker's: retry for about five seconds, so a worker started alongside its server does
    /// not fail on the race.
    pub const WORKER: Self = Self {
        connect_timeout: Duration::from_secs(2),
        call_timeout: None,
        attempts: 20,
        pause: Duration::from_millis(250),
    };

    /// An operator command's: one attempt, so an unreachable server is reported at once, and
    /// a limit on each call.
    pub const fn once(connect_timeout: Duration, call_timeout: Duration) -> Self {
        Self {
            connect_timeout,
            call_timeout: Some(call_timeout),
            attempts: 1,
            pause: Duration::ZERO,
        }
    }
}

/// Why no channel was made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The URL or the TLS settings cannot make an endpoint; said in the flags' words.
    #[error("{0}")]
    Settings(String),
    /// Every attempt failed; the last one's error, with its sources.
    #[error("cannot reach checkpointd at {url}: {}", error_chain(source))]
    Unreachable {
        url: String,
        #[source]
        source: tonic::transport::Error,
    },
}

impl Dial {
    /// Connects to the dialled server as patiently as `patience` says.
    pub async fn connect(&self, patience: &Patience) -> Result<Channel, ConnectError> {
        let mut endpoint = self
            .endpoint()
            .map_err(ConnectError::Settings)?
            .connect_timeout(patience.connect_timeout)
            .tcp_nodelay(true);
        if let Some(call_timeout) = patience.call_timeout {
            endpoint = endpoint.timeout(call_timeout);
        }
        let mut attempt = 1;
        loop {
            match endpoint.connect().await {
                Ok(channel) => return Ok(channel),
                Err(source) if attempt >= patience.attempts => {
                    return Err(ConnectError::Unreachable {
                        url: self.url().to_owned(),
                        source,
                    });
                }
                Err(_) => {
                    attempt += 1;
                    tokio::time::sleep(patience.pause).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_server_is_named_with_the_cause() {
        // Port 1 on loopback: nothing listens there, so the connection is refused at once.
        let dial = Dial::plain("http://127.0.0.1:1").unwrap();
        let patience = Patience {
            attempts: 2,
            pause: Duration::from_millis(1),
            ..Patience::once(Duration::from_secs(2), Duration::from_secs(1))
        };
        let error = dial.connect(&patience).await.unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("cannot reach checkpointd at http://127.0.0.1:1: "),
            "{text}"
        );
        assert!(
            text.len() > "cannot reach checkpointd at http://127.0.0.1:1: ".len() + 5,
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_bad_url_is_a_settings_error() {
        let dial = Dial::plain("http://bad host:1").unwrap();
        let error = dial.connect(&Patience::WORKER).await.unwrap_err();
        assert!(matches!(error, ConnectError::Settings(_)), "{error}");
    }
}
