//! checkpointd: a crash-recovery service for long-running AI agents.
//!
//! Agents save checksummed checkpoints over gRPC and, after a crash, resume from the latest
//! valid one: corrupt checkpoints are skipped, tool results are journalled so side-effecting
//! tools never run twice, and fencing epochs keep a stale worker from overwriting a new owner.
//!
//! # Layout
//!
//! - [`domain`]: wire input parsed once into valid values; checksum v1.
//! - [`store`]: the [`store::CheckpointStore`] contract and its memory, SQLite and Postgres
//!   backends; [`store::plan`] holds the write rules every backend shares.
//! - [`engine`]: verification, fallback past corrupt checkpoints, and recovery.
//! - [`maintenance`]: the retention pruner and the integrity scrub, which page through the
//!   whole store; [`store::retention`] holds the retention rules every backend shares.
//! - [`grpc`]: the server: one thin adapter per service, health and reflection.
//! - [`config`]: layered configuration and the command line.
//! - [`telemetry`]: logs, OpenTelemetry traces and metrics (OTLP), `traceparent` propagation,
//!   and the admin port (`/metrics`, `/healthz`).
//! - [`cli`]: the operator commands (`tasks`, `runs`, `health`), gRPC clients of a running server.
//! - [`queue`]: the task queue contract, its rules, and the in-memory queue.
//! - [`runner`]: the bundled runner (`checkpointd worker`, `checkpointd demo`).
//! - [`error`]: one error type and its mapping to gRPC codes.

pub mod cache;
pub mod cli;
pub mod config;
pub mod domain;
pub mod engine;
pub mod error;
pub mod grpc;
pub mod maintenance;
pub mod queue;
pub mod runner;
pub mod shutdown;
pub mod store;
pub mod telemetry;

/// The generated `checkpoint.v1` code and descriptor set, from the protocol crate.
pub mod proto {
    pub use checkpointd_protocol::FILE_DESCRIPTOR_SET;
    pub use checkpointd_protocol::v1::*;
}
