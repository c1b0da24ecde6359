//! checkpointd: a crash-recovery service for long-running AI agents.
//!
//! Agents save checksummed checkpoints over gRPC and, after a crash, resume from the latest
//! valid one: corrupt checkpoints are skipped, tool results are journalled so side-effecting
//! tools never run twice, and fencing epochs keep a stale worker from overwriting a new owner.
//!
//! # Layout
//!
//! - [`app`]: the composition root: the one place a server is built (the database, the
//!   wrappers around it, every service) and run, with its [`shutdown::Shutdown`].
//! - [`database`]: opens the database a URL names (SQLite, Postgres or memory, from their
//!   crates), as each storage contract it serves.
//! - [`service`]: the rules callers go through: the checkpoint engine (verification, fallback
//!   past corrupt checkpoints, recovery), operator retention, and the task service.
//! - [`instrumented`]: wrappers that give every operation of the storage contracts a span and
//!   a latency metric.
//! - [`cache`]: the Redis hot cache, a wrapper around the checkpoint store contract.
//! - [`maintenance`]: the retention pruner and the integrity scrub, which page through the
//!   whole store, and the reaper, which buries stale tasks on their final attempt as dead letters.
//! - [`transport`]: the accept loop, connection limits and TLS (reloaded on change) under the
//!   gRPC services.
//! - [`grpc`]: one thin adapter per service, health and reflection, as one router; the only
//!   place an error becomes a gRPC status ([`grpc::status`]).
//! - [`wire`]: domain records as `checkpoint.v1` messages, shared by the edge and the cache.
//! - [`console`]: the web console (sign-in, approval inbox, runs, tasks, integrity), its
//!   pages calling the gRPC services in-process as the signed-in credential.
//! - [`config`]: layered configuration and the `serve` flags.
//! - [`serve_error`]: why `serve` could not start or stopped: one error for every step.
//! - [`telemetry`]: the shared telemetry crate (logs, OTLP, metrics, `traceparent`, the admin
//!   port) plus the server's RPC layer.
//! - [`outbound`]: the HTTP client of the server's own calls (JWKS, OpenID), with the extra
//!   CAs of `--outbound-ca-file`.
//! - [`heap`]: allocator tuning that gives large requests' memory back to the OS.

pub mod app;
pub mod cache;
pub mod config;
pub mod console;
pub mod database;
pub mod grpc;
pub mod heap;
pub mod instrumented;
pub mod maintenance;
pub mod notify;
pub mod outbound;
pub mod serve_error;
pub mod service;
pub mod shutdown;
pub mod telemetry;
pub mod transport;
pub mod wire;

/// The generated `checkpoint.v1` code and descriptor set, from the protocol crate.
pub mod proto {
    pub use checkpointd_protocol::FILE_DESCRIPTOR_SET;
    pub use checkpointd_protocol::v1::*;
}
