//! Waiting for something outside the test's control (a process starting, a connection coming
//! back) to become true.

use std::time::{Duration, Instant};

/// Polls `check` until it holds, panicking after 15 s with `what`.
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(15);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
