//! checkpointd's wire contract, for servers and for agents written in Rust.
//!
//! - [`v1`]: the generated messages and gRPC code of `checkpoint.v1` (clients behind the
//!   `client` feature, server traits behind `server`; without either, the messages alone and no
//!   transport at all, which is how the core crate uses them);
//! - [`FILE_DESCRIPTOR_SET`]: what gRPC reflection serves;
//! - [`TENANT_HEADER`]: the metadata key that names a call's tenant;
//! - [`MAX_TOOL_RESULTS_PER_BATCH`], [`MAX_CLIENT_CAPABILITIES`], [`MAX_DELETE_STEPS`]: the
//!   counts of repeated request fields the server refuses above, before decoding;
//! - [`MAX_CLAIM_BATCH`] and [`ClaimBatch`]: how many tasks one claim takes, shared by the
//!   bundled runner, the server and every queue backend;
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

/// Tasks one `Claim` may take; the server refuses a larger `batch_size` (`INVALID_ARGUMENT`).
pub const MAX_CLAIM_BATCH: u32 = 100;

/// How many tasks one claim takes, bounded by [`MAX_CLAIM_BATCH`] at construction: what the
/// runner asks for, the server accepts and every queue backend is handed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClaimBatch(u32);

impl ClaimBatch {
    /// A `ClaimRequest.batch_size`: `0` asks for one task; above the limit is refused (`None`).
    pub fn from_wire(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self(1)),
            n if n > MAX_CLAIM_BATCH => None,
            n => Some(Self(n)),
        }
    }

    /// Up to `wanted` tasks, capped at the limit; `0` takes nothing.
    pub fn up_to(wanted: usize) -> Self {
        Self(wanted.min(MAX_CLAIM_BATCH as usize) as u32)
    }

    pub fn get(self) -> u32 {
        self.0
    }

    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
}

/// Steps one `DeleteCheckpoints` may list; the server refuses more (`RESOURCE_EXHAUSTED`) before
/// decoding the request. Enough for a framework's prune of a long thread in a few calls, small
/// enough that the one transaction holding the run's lock stays short.
pub const MAX_DELETE_STEPS: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_batch_is_bounded_by_the_limit_and_zero_on_the_wire_asks_for_one() {
        assert_eq!(ClaimBatch::from_wire(0).map(ClaimBatch::get), Some(1));
        assert_eq!(
            ClaimBatch::from_wire(MAX_CLAIM_BATCH).map(ClaimBatch::get),
            Some(100)
        );
        assert_eq!(ClaimBatch::from_wire(MAX_CLAIM_BATCH + 1), None);
        assert_eq!(ClaimBatch::up_to(7).get(), 7);
        assert_eq!(ClaimBatch::up_to(5_000).get(), MAX_CLAIM_BATCH);
        assert_eq!(ClaimBatch::up_to(0).get(), 0);
    }
}
