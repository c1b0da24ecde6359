//! Keeps the server's heap from holding on to memory that large requests freed.
//!
//! glibc's malloc keeps freed memory in its arenas for reuse: after one 16 MiB Save of many
//! small messages the server stayed hundreds of megabytes above its idle size for good, and a
//! pod's memory limit counts that. Two things give it back:
//!
//! - [`configure`] (at `serve` startup) fixes the threshold above which an allocation gets its
//!   own mapping at [`MMAP_THRESHOLD`], so a request's large buffers (the body, the state, the
//!   database driver's copies) are unmapped the moment they are freed. glibc would otherwise
//!   raise the threshold after the first large free, and later large buffers would stay in the
//!   arenas.
//! - [`after_large_request`] asks for `malloc_trim(0)`, which returns the free pages of every
//!   arena, whichever thread freed them: the many small allocations of a Save's messages and
//!   metadata, and SQLite's, which go through the C allocator. At most one pass is pending at a
//!   time, a short delay after the request that asked, so a burst costs one pass per
//!   [`TRIM_DELAY`], not one per request.
//!
//! Other C libraries need neither (musl returns large frees on its own) and get no-ops.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A request that held at least this many bytes of the request budget asks for a trim.
pub const LARGE_REQUEST_BYTES: usize = 1 << 20;
/// Allocations of at least this size are mapped on their own and unmapped when freed.
pub const MMAP_THRESHOLD: usize = 256 * 1024;
/// How long after a large request the trim runs: the request's memory is freed by then, and
/// the requests of a burst share one pass.
const TRIM_DELAY: Duration = Duration::from_millis(250);

static PENDING: AtomicBool = AtomicBool::new(false);

/// Tunes the C allocator for a server whose requests come in large bursts; call once, early.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let threshold = libc::c_int::try_from(MMAP_THRESHOLD).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only changes allocator parameters; a refused value (it returns 0)
        // leaves glibc's defaults, which are correct, only less frugal.
        let applied = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, threshold) };
        if applied == 0 {
            tracing::debug!("malloc refused a fixed mmap threshold; keeping its defaults");
        }
    }
}

/// Schedules a trim unless one is already pending; outside a Tokio runtime, does nothing.
pub fn after_large_request() {
    if PENDING.swap(true, Ordering::SeqCst) {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        PENDING.store(false, Ordering::SeqCst);
        return;
    };
    runtime.spawn(async {
        tokio::time::sleep(TRIM_DELAY).await;
        // Cleared first, so memory freed while this pass runs asks for another.
        PENDING.store(false, Ordering::SeqCst);
        // It walks every arena under its lock: off the async workers.
        let _ = tokio::task::spawn_blocking(trim).await;
    });
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim has no preconditions; it only returns free pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
