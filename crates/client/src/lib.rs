//! How a Rust program reaches checkpointd: dial a server (TLS, client certificate, credential),
//! stamp every call with the tenant, the credential and the trace context through one
//! interceptor, and report a failed connection with its whole source chain. The runner and the
//! operator CLI both connect through this crate, so they accept the same flags and send the same
//! headers. No database, cache or HTTP server below it: the protocol crate and tonic.
//!
//! - [`dial`]: the server URL, TLS settings and credential (`--ca-cert`, `--token`, ...).
//! - [`headers`]: [`CallHeaders`], the one interceptor: tenant, credential, `traceparent`.
//! - [`connect`]: a channel from a dial, with timeouts and retries, and the two service clients
//!   on it.
//! - [`error_chain`]: an error and its sources on one line.

pub mod connect;
pub mod dial;
mod error_chain;
pub mod headers;
mod trace_context;

pub use connect::{
    Checkpoints, ConnectError, MAX_MESSAGE_BYTES, Patience, Tasks, checkpoints, tasks,
};
pub use dial::{AUTHORIZATION_HEADER, Dial, DialArgs};
pub use error_chain::error_chain;
pub use headers::{CallHeaders, InvalidTenant};
