//! The web console's settings: where it listens (off unless set) and how long a sign-in lasts.

use std::net::SocketAddr;
use std::time::Duration;

use super::declare::settings;
use super::parse_duration;

settings! {
    /// Web console flags of `checkpointd serve`.
    pub struct ConsoleArgs => ConsoleValues {
        /// HTTP address of the web console (docs/console.md), e.g. `127.0.0.1:8080`; TLS with
        /// the gRPC port's certificate when `--tls-cert` is set. Unset: no console.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_LISTEN")]
        pub console_listen: SocketAddr = unset;
        /// How long a console sign-in lasts before the person must sign in again.
        #[arg(long, env = "CHECKPOINTD_CONSOLE_SESSION_TTL")]
        pub console_session_ttl: Duration = "15m", parsed by parse_duration;
    }
}

/// The web console, when `--console-listen` is set.
#[derive(Clone, Debug)]
pub struct ConsoleSettings {
    /// Where the console's HTTP (or HTTPS) listener binds.
    pub listen: SocketAddr,
    /// A session's whole life, from sign-in; it is never extended.
    pub session_ttl: Duration,
}

impl ConsoleSettings {
    /// A console on `listen` with the declared session lifetime.
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            session_ttl: super::declare::declared_defaults::<ConsoleArgs>().console_session_ttl,
        }
    }

    /// The console these values describe; `None` when no address is set.
    pub(super) fn from_values(values: ConsoleValues) -> Result<Option<Self>, String> {
        let Some(listen) = values.console_listen else {
            return Ok(None);
        };
        if values.console_session_ttl.is_zero() {
            return Err("--console-session-ttl must be longer than 0s".into());
        }
        Ok(Some(Self {
            listen,
            session_ttl: values.console_session_ttl,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_is_off_without_an_address_and_a_zero_session_life_is_refused() {
        let values = |listen: Option<&str>, ttl: u64| ConsoleValues {
            console_listen: listen.map(|addr| addr.parse().unwrap()),
            console_session_ttl: Duration::from_secs(ttl),
        };
        assert!(
            ConsoleSettings::from_values(values(None, 900))
                .unwrap()
                .is_none()
        );
        let on = ConsoleSettings::from_values(values(Some("127.0.0.1:8080"), 60))
            .unwrap()
            .unwrap();
        assert_eq!(on.session_ttl, Duration::from_secs(60));
        assert!(ConsoleSettings::from_values(values(Some("127.0.0.1:8080"), 0)).is_err());
        assert_eq!(
            ConsoleSettings::new(on.listen).session_ttl,
            Duration::from_secs(15 * 60)
        );
    }
}
