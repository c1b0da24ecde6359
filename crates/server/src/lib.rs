//! checkpointd: a crash-recovery service for long-running AI agents.
//!
//! Agents save checksummed checkpoints over gRPC and, after a crash, resume from the latest
//! valid one: corrupt checkpoints are skipped, tool results are journalled so side-effecting
//! tools never run twice, and fencing epochs keep a stale worker from overwriting a new owner.
//!
//! # Layout
//!
//! - [`app`]: the composition root: the one place a server is built and run, with its
//!   [`shutdown::Shutdown`].
//! - [`domain`]: wire input parsed once into valid values; checksum v1.
//! - [`database`]: opens the database a URL names, as each contract it serves.
//! - [`store`]: the [`store::CheckpointStore`] and [`store::RetentionStore`] contracts and their
//!   memory, SQLite and Postgres backends; [`store::plan`] holds the write rules every backend
//!   shares.
//! - [`service`]: the rules callers go through: the checkpoint engine (verification, fallback
//!   past corrupt checkpoints, recovery), operator retention, and the task service.
//! - [`queue`]: the [`queue::TaskQueue`] contract, its transition rules, its memory, SQLite and
//!   Postgres backends and the instrumented wrapper.
//! - [`cache`]: the Redis hot cache, a wrapper around the checkpoint store contract.
//! - [`maintenance`]: the retention pruner and the integrity scrub, which page through the
//!   whole store ([`store::retention`] holds the retention rules every backend shares), and the
//!   reaper, which buries stale tasks on their final attempt as dead letters.
//! - [`grpc`]: one thin adapter per service, health and reflection, as one router.
//! - [`wire`]: domain records as `checkpoint.v1` messages, shared by the edge and the cache.
//! - [`config`]: layered configuration and the `serve` flags.
//! - [`telemetry`]: the shared telemetry crate (logs, OTLP, metrics, `traceparent`, the admin
//!   port) plus the server's RPC layer.
//! - [`cli`]: the operator commands: `tasks`, `runs` and `health`, gRPC clients of a running
//!   server, and `prune` and `scrub`, which work straight on the database.
//! - [`demo`]: `checkpointd demo`, the reference crash scenario with the bundled runner
//!   (`checkpointd-runner`, which also backs `checkpointd worker`).
//! - [`error`]: one error type and its mapping to gRPC codes.
//! - [`heap`]: allocator tuning that gives large requests' memory back to the OS.

pub mod app;
pub mod cache;
pub mod cli;
pub mod config;
pub mod database;
pub mod demo;
pub mod domain;
pub mod error;
pub mod grpc;
pub mod heap;
pub mod maintenance;
pub mod queue;
pub mod secret;
pub mod service;
pub mod shutdown;
pub mod store;
pub mod telemetry;
pub mod wire;

/// The generated `checkpoint.v1` code and descriptor set, from the protocol crate.
pub mod proto {
    pub use checkpointd_protocol::FILE_DESCRIPTOR_SET;
    pub use checkpointd_protocol::v1::*;
}
