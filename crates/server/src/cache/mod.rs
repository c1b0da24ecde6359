//! The Redis hot cache: a wrapper around any [`CheckpointStore`] that serves a run's latest
//! checkpoint from Redis once the store confirms it is still the latest.
//!
//! Correctness never rests on Redis. Every hit is checked against [`LatestHead`] — the store's
//! latest valid checkpoint (step, id, epoch, checksum) and tool-journal head, read by primary
//! key without payloads — and its checksum is verified. So an entry left stale by a crash
//! between commit and cache write, by writes made while Redis was down, by another server
//! instance, or by a newer epoch is a miss, never an answer. Writes go to Redis only after the
//! store's commit, queued so a Save never waits for Redis.

mod codec;
mod keys;
mod link;
mod stats;
#[cfg(test)]
pub(crate) mod tests;
mod writer;

use crate::config::CacheSettings;
use std::sync::Arc;

use tokio::sync::watch;

pub use keys::RunKeys;
pub use stats::{CacheCounts, CacheStats, Lookup};

use checkpointd_core::domain::{
    EntryKind, Epoch, IntentOutcome, JournalScope, Message, MessageChain, MessageWindow,
    NewCheckpoint, NewToolIntent, NewToolResult, RunKey, SavedCheckpoint, Step, ToolRecord,
    verify_tool_window,
};
use checkpointd_core::error::Result;
use checkpointd_core::plan::JournalRewrite;
use checkpointd_core::secret::ExposeSecret;
use checkpointd_storage::store::{
    CheckpointStore, DeletedCheckpoints, LatestHead, Snapshot, Which,
};
use checkpointd_storage::wrap_checkpoint_store;
use link::RedisLink;
use writer::{CacheWrite, CacheWriter};

/// A [`CheckpointStore`] with a Redis cache in front of its latest-checkpoint reads.
pub struct CachedStore {
    inner: Arc<dyn CheckpointStore>,
    link: Arc<RedisLink>,
    writer: CacheWriter,
    settings: CacheSettings,
}

impl CachedStore {
    /// Wraps `inner`. Fails only on a malformed URL; an unreachable Redis is an outage.
    pub fn wrap(inner: Arc<dyn CheckpointStore>, settings: CacheSettings) -> Result<Arc<Self>> {
        let link = RedisLink::start(
            settings.url.expose_secret(),
            settings.ca_cert.as_deref(),
            settings.timeout,
        )
        .map_err(checkpointd_core::error::Error::InvalidArgument)?;
        let ttl_ms = u64::try_from(settings.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let writer = CacheWriter::start(link.clone(), ttl_ms);
        Ok(Arc::new(Self {
            inner,
            link,
            writer,
            settings,
        }))
    }

    pub fn stats(&self) -> Arc<CacheStats> {
        self.link.stats.clone()
    }

    /// Whether Redis is reachable; health reports it as a degraded dependency.
    pub fn status(&self) -> watch::Receiver<bool> {
        self.link.status()
    }

    /// Returns once every cache write queued before this call has reached Redis or been
    /// dropped, so a caller can look at Redis knowing no earlier write is still on its way.
    pub async fn flushed(&self) {
        self.writer.flushed().await;
    }

    fn keys(&self, run: &RunKey) -> RunKeys {
        RunKeys::new(&self.settings.prefix, run)
    }

    /// The latest checkpoint: from Redis when it matches the store's head, else from the store.
    /// The latest checkpoint's `window`: a hit is a whole verified entry (entries are small,
    /// see [`CacheSettings::max_entry_bytes`]) cut to the window, its whole journal left for
    /// the engine to cut to `journal`; only a whole load (whole log and journal) fills.
    async fn load_latest(
        &self,
        run: &RunKey,
        window: MessageWindow,
        journal: JournalScope,
    ) -> Result<Option<Snapshot>> {
        let Some(mut connection) = self.link.connection() else {
            self.link.stats.record(Lookup::Bypassed);
            return self
                .inner
                .load_window(run, Which::LatestBelow(None), window, journal)
                .await;
        };
        let keys = self.keys(run);
        // Both round trips at once: a hit costs the slower of the two, not their sum.
        let fetch = tokio::time::timeout(self.link.timeout(), fetch(&mut connection, &keys));
        let (head, cached) = tokio::join!(self.inner.latest_head(run), fetch);
        let head = head?;
        match cached {
            Ok(Ok(entry)) => {
                if let Some(mut snapshot) = self.judge(run, &keys, head.as_ref(), entry) {
                    self.link.stats.record(Lookup::Hit);
                    snapshot.checkpoint.restrict(window);
                    return Ok(Some(snapshot));
                }
            }
            Ok(Err(error)) => {
                self.link.stats.record(Lookup::Bypassed);
                self.link.failed("read", &error);
            }
            Err(_) => {
                self.link.stats.record(Lookup::Bypassed);
                self.link.failed("read", &"timed out");
            }
        }
        let found = self
            .inner
            .load_window(run, Which::LatestBelow(None), window, journal)
            .await?;
        let whole = |found: &&Snapshot| found.checkpoint.is_whole() && found.tool_window.is_whole();
        if let Some(snapshot) = found.as_ref().filter(whole) {
            self.fill(&keys, snapshot);
        }
        Ok(found)
    }

    /// The cached entry as a snapshot if it is exactly the store's latest; counts the outcome.
    fn judge(
        &self,
        run: &RunKey,
        keys: &RunKeys,
        head: Option<&LatestHead>,
        entry: Entry,
    ) -> Option<Snapshot> {
        let stats = &self.link.stats;
        let Some(header) = entry.header else {
            stats.record(Lookup::Miss);
            return None;
        };
        let Some(snapshot) = codec::snapshot(run, &header, &entry.messages, &entry.tools) else {
            stats.record(Lookup::Corrupt);
            self.writer.send(CacheWrite::Evicted { keys: keys.clone() });
            return None;
        };
        if !matches_head(&snapshot, head) {
            stats.record(Lookup::Stale);
            return None;
        }
        let verified = verify_tool_window(&snapshot.tools, &snapshot.tool_window).and_then(|()| {
            snapshot
                .checkpoint
                .verify_window(&snapshot.tools, &snapshot.tool_window)
        });
        if let Err(reason) = verified {
            tracing::warn!(run_id = %run.run_id, %reason, "dropping a corrupt cache entry");
            stats.record(Lookup::Corrupt);
            self.writer.send(CacheWrite::Evicted { keys: keys.clone() });
            return None;
        }
        Some(Snapshot {
            verified: true,
            ..snapshot
        })
    }

    fn fill(&self, keys: &RunKeys, snapshot: &Snapshot) {
        // The cached journal holds results only, so a run with intents is served by the store:
        // intents are rare (one per side-effecting call) and such a run stays correct either way.
        if snapshot
            .tools
            .iter()
            .any(|record| record.kind == EntryKind::Intent)
        {
            return;
        }
        let checkpoint = &snapshot.checkpoint;
        if entry_bytes(&checkpoint.state, &checkpoint.messages) > self.settings.max_entry_bytes {
            CacheStats::bump(&self.link.stats.skipped_large);
            return;
        }
        self.writer.send(CacheWrite::Filled {
            keys: keys.clone(),
            header: codec::stored_header(checkpoint),
            messages: checkpoint.messages.iter().map(codec::message).collect(),
            tools: snapshot.tools.iter().map(codec::tool).collect(),
        });
    }
}

/// What the size threshold is judged on: state plus message contents.
fn entry_bytes(state: &[u8], messages: &[Message]) -> usize {
    state.len()
        + messages
            .iter()
            .map(|message| message.content.len())
            .sum::<usize>()
}

/// Whether a decoded entry is the store's latest checkpoint with the store's whole journal.
fn matches_head(snapshot: &Snapshot, head: Option<&LatestHead>) -> bool {
    let Some(head) = head else { return false };
    let Some(latest) = &head.checkpoint else {
        return false;
    };
    if head.has_newer {
        // Quarantined checkpoints lie above the entry: the answer must list them, which the
        // store does (the cache never changes an answer). Such runs wait for a repair.
        return false;
    }
    let checkpoint = &snapshot.checkpoint;
    let journal_head = snapshot.tools.last().map_or([0; 32], |record| record.chain);
    latest.step == checkpoint.step
        && latest.id == checkpoint.id
        && latest.epoch == checkpoint.epoch
        && latest.checksum == checkpoint.checksum
        && head.tools.len == snapshot.tools.len() as u64
        && head.tools.head == journal_head
}

/// A run's entry as Redis holds it.
struct Entry {
    header: Option<Vec<u8>>,
    messages: Vec<Vec<u8>>,
    tools: Vec<Vec<u8>>,
}

async fn fetch(
    connection: &mut redis::aio::ConnectionManager,
    keys: &RunKeys,
) -> redis::RedisResult<Entry> {
    let (header, messages, tools) = redis::pipe()
        .get(&keys.checkpoint)
        .lrange(&keys.messages, 0, -1)
        .lrange(&keys.tools, 0, -1)
        .query_async(connection)
        .await?;
    Ok(Entry {
        header,
        messages,
        tools,
    })
}

// Only writes and the latest-checkpoint read touch Redis; the rest goes to the store as is. That
// includes `ping`: a Redis outage degrades the server, it never fails the store's health.
// Retention is not part of this contract: it never removes a run's latest valid checkpoint, so
// it cannot make a cached entry wrong, and callers reach it on the store itself.
wrap_checkpoint_store! {
    impl for CachedStore, wrapping self.inner,
    forwarding [
        tools, steps, begin_resume, list, run_exists, ping, latest_head, journal_actions,
        // Reads of heads and listings never come from the cache: it holds latest checkpoints.
        label_step, run_info, list_runs,
        // Sizes come from the store: the cache holds whole answers, not their sizes.
        window_stops_short,
    ],
    {
        async fn save(&self, checkpoint: &NewCheckpoint) -> Result<SavedCheckpoint> {
            let saved = self.inner.save(checkpoint).await?;
            let keys = self.keys(&checkpoint.run);
            if entry_bytes(&checkpoint.state, &checkpoint.messages) > self.settings.max_entry_bytes {
                CacheStats::bump(&self.link.stats.skipped_large);
                self.writer.send(CacheWrite::Evicted { keys });
            } else if !saved.already_existed {
                self.writer.send(CacheWrite::Saved {
                    keys,
                    header: codec::saved_header(checkpoint, &saved),
                    offset: checkpoint.message_offset,
                    messages: checkpoint.messages.iter().map(codec::message).collect(),
                });
            }
            Ok(saved)
        }

        async fn record_tool_result(&self, result: &NewToolResult) -> Result<(ToolRecord, bool)> {
            let (record, existed) = self.inner.record_tool_result(result).await?;
            if !existed {
                self.writer.send(CacheWrite::ToolRecorded {
                    keys: self.keys(&result.run),
                    seq: record.seq,
                    tool: codec::tool(&record),
                });
            }
            Ok((record, existed))
        }

        async fn record_tool_results(
            &self,
            results: &[NewToolResult],
        ) -> Result<Vec<(ToolRecord, bool)>> {
            let answers = self.inner.record_tool_results(results).await?;
            let Some(first) = results.first() else {
                return Ok(answers);
            };
            // Each new record in journal order, as that many single results would have been.
            for (record, existed) in &answers {
                if !existed {
                    self.writer.send(CacheWrite::ToolRecorded {
                        keys: self.keys(&first.run),
                        seq: record.seq,
                        tool: codec::tool(record),
                    });
                }
            }
            Ok(answers)
        }

        async fn record_tool_intent(&self, intent: &NewToolIntent) -> Result<IntentOutcome> {
            let outcome = self.inner.record_tool_intent(intent).await?;
            if !outcome.already_recorded {
                // Runs with intents are not cached (see `fill`): drop what is there.
                self.writer.send(CacheWrite::Evicted {
                    keys: self.keys(&intent.run),
                });
            }
            Ok(outcome)
        }

        async fn rewrite_journal(&self, rewrite: &JournalRewrite) -> Result<Vec<Step>> {
            let quarantined = self.inner.rewrite_journal(rewrite).await?;
            self.writer.send(CacheWrite::Evicted {
                keys: self.keys(&rewrite.run),
            });
            Ok(quarantined)
        }

        async fn load_window(
            &self,
            run: &RunKey,
            which: Which,
            window: MessageWindow,
            journal: JournalScope,
        ) -> Result<Option<Snapshot>> {
            match which {
                Which::LatestBelow(None) => self.load_latest(run, window, journal).await,
                // Fallbacks past corrupt checkpoints and exact steps are rare: straight to the
                // store.
                _ => self.inner.load_window(run, which, window, journal).await,
            }
        }

        async fn quarantine(&self, run: &RunKey, step: Step, reason: &str) -> Result<()> {
            // The head check already stops a quarantined checkpoint being served; evicting just
            // frees the memory sooner.
            self.inner.quarantine(run, step, reason).await?;
            self.writer.send(CacheWrite::Evicted {
                keys: self.keys(run),
            });
            Ok(())
        }

        async fn rewind(&self, run: &RunKey, epoch: Epoch, chain: MessageChain) -> Result<()> {
            self.inner.rewind(run, epoch, chain).await?;
            self.writer.send(CacheWrite::Rewound {
                keys: self.keys(run),
                len: chain.len,
            });
            Ok(())
        }

        async fn delete_run(&self, run: &RunKey) -> Result<u64> {
            let deleted = self.inner.delete_run(run).await?;
            self.writer.send(CacheWrite::Evicted {
                keys: self.keys(run),
            });
            Ok(deleted)
        }

        async fn delete_checkpoints(
            &self,
            run: &RunKey,
            epoch: Option<Epoch>,
            steps: &[Step],
        ) -> Result<DeletedCheckpoints> {
            let outcome = self.inner.delete_checkpoints(run, epoch, steps).await?;
            // The head check already misses on a deleted latest checkpoint (the store's head
            // names another step); evicting after the commit frees the entry, and the next
            // latest read fills it from the store again.
            if outcome.deleted > 0 {
                self.writer.send(CacheWrite::Evicted {
                    keys: self.keys(run),
                });
            }
            Ok(outcome)
        }
    }
}
