//! Maintenance jobs: the retention pruner and the integrity scrub, which walk many runs, and
//! the reaper, which buries stale tasks whose attempts are used up.
//!
//! Both page through the [`checkpointd_storage::store::RetentionStore`] by keyset (a bounded page at a time,
//! never the whole store) and act on one run or one checkpoint at a time, verifying through the
//! [`crate::service::Engine`], so their memory stays flat however many checkpoints exist.

pub mod pruner;
pub mod reaper;
pub mod scrub;

pub use pruner::{PlannedPrune, PruneReport, Pruner};
pub use reaper::Reaper;
pub use scrub::{ScrubItem, ScrubStats, scrub};
