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
//! - [`grpc`]: the server: one thin adapter per service, health and reflection.
//! - [`config`]: layered configuration and the command line.
//! - [`telemetry`]: logging and tracing setup.
//! - [`bench`]: `checkpointd bench`, side-by-side measurements against raw SQL.
//! - [`error`]: one error type and its mapping to gRPC codes.

pub mod bench;
pub mod config;
pub mod domain;
pub mod engine;
pub mod error;
pub mod grpc;
pub mod proto;
pub mod queue;
pub mod store;
pub mod telemetry;
