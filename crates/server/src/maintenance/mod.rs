//! Store maintenance that walks many runs: the retention pruner and the integrity scrub.
//!
//! Both page through the [`crate::store::RetentionStore`] by keyset (a bounded page at a time,
//! never the whole store) and act on one run or one checkpoint at a time, verifying through the
//! [`crate::service::Engine`], so their memory stays flat however many checkpoints exist.

pub mod pruner;
pub mod scrub;

pub use pruner::{PlannedPrune, PruneReport, Pruner, RetentionSettings};
pub use scrub::{ScrubItem, ScrubStats, scrub};
