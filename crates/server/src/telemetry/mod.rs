//! Telemetry in the server: everything from `checkpointd-telemetry` (logs, OTLP, metrics,
//! propagation, the admin port) plus the server-only parts.
//!
//! - [`admin`]: the admin port with `/healthz` answering for the store;
//! - [`rpc_layer`]: adopts the caller's trace context and times each gRPC call;
//! - [`receiver`]: an in-process OTLP collector for the bench and the tests.

pub use checkpointd_telemetry::*;

pub mod admin;
pub mod rpc_layer;
