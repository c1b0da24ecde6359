//! The transport under the gRPC services: the guarded accept loop (a cap on open connections,
//! back-off on accept errors, timeouts for silent clients) and TLS terminated over it, with
//! certificates reloaded without a restart. The composition root ([`crate::app`]) hands the
//! router the connections this module yields.

pub(crate) mod incoming;
pub(crate) mod served;
pub mod tls;
pub mod tls_error;

pub use tls::TlsReloader;
