//! The scaling scenarios' set-up: tracing overhead, history length and long conversations,
//! each on fresh Postgres schemas and a temporary SQLite file.

use std::path::Path;

use super::clients::InProcessServer;
use super::conversation::{self, ConversationPoint};
use super::held_prefix::{self, HeldPrefixEffort, HeldPrefixResult};
use super::history::{self, HistoryResult};
use super::overhead::{self, Overhead};
use super::scenario::Effort;
use super::server_process::CheckpointdBinary;
use super::{BoxError, Schemas};
use checkpointd_storage::store::StoreOptions;

/// How much the scaling scenarios do.
#[derive(Clone, Copy, Debug)]
pub struct ScalingEffort {
    pub reads: Effort,
    /// Checkpoints in the longest history (the others are 10 and its square root times 10).
    pub longest_history: usize,
    /// The runs whose loads ask only for what follows the log.
    pub held_prefix: HeldPrefixEffort,
    pub conversations: usize,
    pub conversation_length: usize,
}

/// History lengths from 10 up to `longest`: 10, 1,000, 10,000 by default.
pub fn history_lengths(longest: usize) -> Vec<usize> {
    let mut lengths = vec![10, longest / 10, longest];
    lengths.retain(|&length| length >= 1);
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

pub async fn run_tracing(
    schemas: &Schemas<'_>,
    binary: &CheckpointdBinary,
    effort: Effort,
) -> Result<Vec<Overhead>, BoxError> {
    let stores = [
        (
            "postgres",
            schemas.create_url().await?,
            schemas.create_url().await?,
        ),
        ("memory", "memory://".to_owned(), "memory://".to_owned()),
    ];
    overhead::measure(binary, &stores, effort).await
}

/// Runs `measure` against a Postgres server and a SQLite one, one after the other.
async fn on_each_store<T, F, Fut>(
    schemas: &Schemas<'_>,
    scratch: &Path,
    options: &StoreOptions,
    measure: F,
) -> Result<Vec<T>, BoxError>
where
    F: Fn(&'static str, std::net::SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<T>, BoxError>>,
{
    std::fs::create_dir_all(scratch)?;
    let sqlite = format!(
        "sqlite://{}",
        scratch
            .join(format!("scaling-{}.db", std::process::id()))
            .display()
    );
    let mut results = Vec::new();
    for (store, url) in [
        ("postgres", schemas.create_url().await?),
        ("sqlite", sqlite),
    ] {
        let server = InProcessServer::start(&url, options).await?;
        let measured = measure(store, server.addr).await;
        server.stop().await?;
        results.extend(measured?);
    }
    Ok(results)
}

/// The history scenario's two parts: runs of many checkpoints, and runs of many messages (or
/// journal entries) loaded with the prefix held.
pub struct HistoryResults {
    pub checkpoints: Vec<HistoryResult>,
    pub held_prefix: Vec<HeldPrefixResult>,
}

pub async fn run_history(
    schemas: &Schemas<'_>,
    scratch: &Path,
    options: &StoreOptions,
    effort: ScalingEffort,
) -> Result<HistoryResults, BoxError> {
    let lengths = history_lengths(effort.longest_history);
    let checkpoints = on_each_store(schemas, &scratch.join("history"), options, |store, addr| {
        let lengths = lengths.clone();
        async move { history::measure(store, addr, &lengths, effort.reads).await }
    })
    .await?;
    let held_prefix = on_each_store(
        schemas,
        &scratch.join("held-prefix"),
        options,
        |store, addr| held_prefix::measure(store, addr, effort.held_prefix),
    )
    .await?;
    Ok(HistoryResults {
        checkpoints,
        held_prefix,
    })
}

pub async fn run_conversation(
    schemas: &Schemas<'_>,
    scratch: &Path,
    options: &StoreOptions,
    effort: ScalingEffort,
) -> Result<Vec<ConversationPoint>, BoxError> {
    on_each_store(
        schemas,
        &scratch.join("conversation"),
        options,
        |store, addr| {
            conversation::measure(
                store,
                addr,
                effort.conversations,
                effort.conversation_length,
            )
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_lengths_run_from_ten_to_the_longest() {
        assert_eq!(history_lengths(10_000), vec![10, 1000, 10_000]);
        assert_eq!(history_lengths(1000), vec![10, 100, 1000]);
        assert_eq!(history_lengths(10), vec![1, 10]);
    }
}
