//! Names no other test, test binary or earlier run uses.

use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// `<prefix><sep><pid><sep><n><sep><nanos>`: the pid and counter keep this process's names
/// apart; the nanoseconds keep them apart from what an earlier process with the same pid left.
pub fn unique_name(prefix: &str, separator: char) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let pid = std::process::id();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{separator}{pid}{separator}{n}{separator}{nanos}")
}
