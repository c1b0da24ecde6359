//! checkpointd's wire contract, for servers and for agents written in Rust.
//!
//! - [`v1`]: the generated messages and gRPC code of `checkpoint.v1` (clients behind the
//!   `client` feature, server traits behind `server`; without either, the messages alone and no
//!   transport at all, which is how the core crate uses them);
//! - [`FILE_DESCRIPTOR_SET`]: what gRPC reflection serves;
//! - [`TENANT_HEADER`]: the metadata key that names a call's tenant;
//! - [`MAX_TOOL_RESULTS_PER_BATCH`], [`MAX_CLIENT_CAPABILITIES`], [`MAX_DELETE_STEPS`]: the
//!   counts of repeated request fields the server refuses above, before decoding;
//! - [`checksum`]: checksum v1, the digest the server verifies on every save and read, checked
//!   against the shared vectors in the repository's `tests/vectors/`.
//!
//! Nothing here touches a database, a cache or HTTP beyond the gRPC channel itself: the crate
//! builds without SQLite, Postgres, Redis or axum, so a Rust agent can depend on it alone.

pub mod checksum;

/// Generated protobuf and gRPC code for `checkpoint.v1`; nothing hand-written lives here.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/checkpoint.v1.rs"));
}

/// The encoded descriptor set that gRPC reflection serves.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/checkpoint_descriptor.bin"));

/// The gRPC metadata key naming the tenant a call works in.
pub const TENANT_HEADER: &str = "x-tenant-id";

/// Entries one `RecordToolResults` may carry; the server refuses more (`RESOURCE_EXHAUSTED`)
/// before decoding the request.
pub const MAX_TOOL_RESULTS_PER_BATCH: usize = 1000;

/// Capabilities one `Resume` may declare; the server refuses more (`RESOURCE_EXHAUSTED`) before
/// decoding the request. Far above the few that exist, so a client never meets it.
pub const MAX_CLIENT_CAPABILITIES: usize = 64;

/// Steps one `DeleteCheckpoints` may list; the server refuses more (`RESOURCE_EXHAUSTED`) before
/// decoding the request. Enough for a framework's prune of a long thread in a few calls, small
/// enough that the one transaction holding the run's lock stays short.
pub const MAX_DELETE_STEPS: usize = 1000;
