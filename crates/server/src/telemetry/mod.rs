//! Telemetry in the server: everything from `checkpointd-telemetry` (logs, OTLP, metrics,
//! propagation, the admin routes) plus [`rpc_layer`], which adopts the caller's trace context and
//! times each gRPC call.

pub use checkpointd_telemetry::*;

pub mod rpc_layer;
