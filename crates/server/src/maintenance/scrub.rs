//! The integrity scrub: verify every checkpoint of a tenant or of the whole store, quarantining
//! the corrupt ones, one keyset page at a time.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::service::Engine;
use checkpointd_core::domain::{PageSize, RunKey, Tenant, Verdict};
use checkpointd_core::error::Result;
use checkpointd_storage::store::RetentionStore;

/// One verified checkpoint.
#[derive(Clone, Debug)]
pub struct ScrubItem {
    pub run: RunKey,
    pub verdict: Verdict,
}

/// What a scrub did, and how much it held at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScrubStats {
    pub checked: u64,
    pub corrupt: u64,
    pub pages: u64,
    /// The most checkpoint addresses the store returned in one page: what the scrub held.
    pub largest_page: usize,
}

/// Verifies every checkpoint of `tenant` (every tenant when `None`), listing `page_size`
/// addresses per page from `listing` and verifying each through `engine`, and sends each verdict to `out` as it is made. Errors are returned, not sent:
/// the caller decides how to report them (the gRPC adapter sends them down the same channel).
///
/// Memory is one page of addresses plus one checkpoint at a time, and `out` is bounded, so a
/// slow reader slows the scrub instead of letting verdicts pile up. Stops early, with the stats
/// so far, when `out` is closed or `stop` is cancelled.
pub async fn scrub(
    engine: &Engine,
    listing: &dyn RetentionStore,
    tenant: Option<&Tenant>,
    page_size: PageSize,
    out: &mpsc::Sender<Result<ScrubItem>>,
    stop: &CancellationToken,
) -> Result<ScrubStats> {
    let page_size = page_size.get();
    let mut stats = ScrubStats::default();
    let mut after = None;
    loop {
        let page = listing
            .checkpoints_after(tenant, after.as_ref(), page_size)
            .await?;
        stats.pages += 1;
        stats.largest_page = stats.largest_page.max(page.len());
        for at in &page {
            if stop.is_cancelled() {
                return Ok(stats);
            }
            // Pruned since it was listed: nothing left to verify.
            let Some(verdict) = engine.verify_step(&at.run, at.step).await? else {
                continue;
            };
            stats.checked += 1;
            if !verdict.valid {
                stats.corrupt += 1;
            }
            let item = ScrubItem {
                run: at.run.clone(),
                verdict,
            };
            if out.send(Ok(item)).await.is_err() {
                return Ok(stats);
            }
        }
        if page.len() < page_size {
            return Ok(stats);
        }
        after = page.last().cloned();
    }
}
