//! Cache writes: queued after the store's commit and applied in order by one task, in batches
//! of one round trip, so a Save never waits for Redis and two writes to a run never land out of
//! order.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use redis::Script;
use tokio::sync::{mpsc, oneshot};

use super::keys::RunKeys;
use super::link::RedisLink;
use super::stats::CacheStats;

/// Writes waiting beyond this are dropped (and counted): the cache may lag, never block.
const QUEUE_DEPTH: usize = 4096;
/// How long the writer lets writes gather after the first, and how many it sends at once.
const BATCH_WINDOW: Duration = Duration::from_millis(1);
const MAX_BATCH: usize = 256;

/// One change to a run's entry.
#[derive(Debug)]
pub enum CacheWrite {
    /// A Save committed: its messages start at `offset` in the log.
    Saved {
        keys: RunKeys,
        header: Vec<u8>,
        offset: u64,
        messages: Vec<Vec<u8>>,
    },
    /// A read went to the store: replace the entry with what it returned.
    Filled {
        keys: RunKeys,
        header: Vec<u8>,
        messages: Vec<Vec<u8>>,
        tools: Vec<Vec<u8>>,
    },
    /// A tool result was journalled at `seq` (from 1).
    ToolRecorded {
        keys: RunKeys,
        seq: u64,
        tool: Vec<u8>,
    },
    /// The message log was truncated to `len` messages.
    Rewound { keys: RunKeys, len: u64 },
    /// The run is gone, or its entry is not worth keeping.
    Evicted { keys: RunKeys },
    /// Not a write: answered once every write queued before it has been applied or dropped.
    Barrier(oneshot::Sender<()>),
}

/// Appends a Save's messages when the cached log ends exactly where they start; otherwise
/// the cached log cannot be trusted to be this run's prefix, so the entry is dropped and the
/// next read refills it.
const SAVED: &str = r"
local offset = tonumber(ARGV[2])
local len = redis.call('LLEN', KEYS[2])
if len < offset then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
if len > offset then
  if offset == 0 then redis.call('DEL', KEYS[2]) else redis.call('LTRIM', KEYS[2], 0, offset - 1) end
end
for i = 4, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[1])
return 1
";

const FILLED: &str = r"
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
local count = tonumber(ARGV[3])
for i = 4, 3 + count do redis.call('RPUSH', KEYS[2], ARGV[i]) end
for i = 4 + count, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[1])
return 1
";

/// The journal is append-only: a result lands only right after its predecessor; a retry of
/// one already cached changes nothing; a gap means the cached journal is incomplete.
const TOOL_RECORDED: &str = r"
local seq = tonumber(ARGV[2])
local len = redis.call('LLEN', KEYS[3])
if len == seq - 1 then
  redis.call('RPUSH', KEYS[3], ARGV[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[1])
  return 1
end
if len >= seq then return 0 end
redis.call('DEL', KEYS[3])
return 0
";

const REWOUND: &str = r"
local len = tonumber(ARGV[1])
if len == 0 then redis.call('DEL', KEYS[2]) else redis.call('LTRIM', KEYS[2], 0, len - 1) end
return 1
";

/// The sending side, held by the cached store.
#[derive(Clone)]
pub struct CacheWriter {
    queue: mpsc::Sender<CacheWrite>,
    stats: Arc<CacheStats>,
}

impl CacheWriter {
    /// Spawns the task that applies writes; it ends when every writer handle is dropped.
    pub fn start(link: Arc<RedisLink>, ttl_ms: u64) -> Self {
        let (queue, pending) = mpsc::channel(QUEUE_DEPTH);
        let stats = link.stats.clone();
        tokio::spawn(apply_writes(link, ttl_ms, pending));
        Self { queue, stats }
    }

    /// Queues a write without waiting; a full queue drops it (the cache lags, reads stay right).
    pub fn send(&self, write: CacheWrite) {
        if self.queue.try_send(write).is_err() {
            CacheStats::bump(&self.stats.writes_dropped);
        }
    }

    /// Returns once every write queued before this call has been applied to Redis or dropped.
    pub async fn flushed(&self) {
        let (done, applied) = oneshot::channel();
        // Waits for room instead of dropping: a barrier that can be lost would promise nothing.
        if self.queue.send(CacheWrite::Barrier(done)).await.is_ok() {
            // An error means the writer task is gone, and with it every pending write.
            let _ = applied.await;
        }
    }
}

struct Scripts {
    saved: Script,
    filled: Script,
    tool_recorded: Script,
    rewound: Script,
}

async fn apply_writes(link: Arc<RedisLink>, ttl_ms: u64, mut pending: mpsc::Receiver<CacheWrite>) {
    let scripts = Scripts {
        saved: Script::new(SAVED),
        filled: Script::new(FILLED),
        tool_recorded: Script::new(TOOL_RECORDED),
        rewound: Script::new(REWOUND),
    };
    // Scripts go to Redis with the first batch and again after any failure (a restarted Redis
    // has forgotten them).
    let mut load_scripts = true;
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        if pending.recv_many(&mut batch, MAX_BATCH).await == 0 {
            return;
        }
        // Let writes gather: those queued meanwhile wake nobody, and share one round trip.
        tokio::time::sleep(BATCH_WINDOW).await;
        while batch.len() < MAX_BATCH {
            match pending.try_recv() {
                Ok(write) => batch.push(write),
                Err(_) => break,
            }
        }
        let (writes, barriers) = split_barriers(coalesce(std::mem::take(&mut batch)));
        if !writes.is_empty() {
            load_scripts = apply_batch(&link, &scripts, ttl_ms, load_scripts, &writes).await;
        }
        // Every write queued before a barrier is in this batch or an earlier one: all settled.
        for barrier in barriers {
            let _ = barrier.send(());
        }
    }
}

/// Sends one batch in one round trip; returns whether the scripts must be loaded next time.
async fn apply_batch(
    link: &RedisLink,
    scripts: &Scripts,
    ttl_ms: u64,
    load_scripts: bool,
    writes: &[CacheWrite],
) -> bool {
    let count = writes.len() as u64;
    let Some(mut connection) = link.connection() else {
        link.stats
            .writes_dropped
            .fetch_add(count, Ordering::Relaxed);
        return true;
    };
    let mut pipe = redis::pipe();
    if load_scripts {
        for script in [
            &scripts.saved,
            &scripts.filled,
            &scripts.tool_recorded,
            &scripts.rewound,
        ] {
            pipe.load_script(script).ignore();
        }
    }
    for write in writes {
        add(&mut pipe, scripts, ttl_ms, write);
    }
    let outcome =
        tokio::time::timeout(link.timeout(), pipe.query_async::<()>(&mut connection)).await;
    let failure = match outcome {
        Ok(Ok(())) => return false,
        Ok(Err(error)) => error.to_string(),
        Err(_) => "timed out".to_owned(),
    };
    link.stats
        .writes_dropped
        .fetch_add(count, Ordering::Relaxed);
    link.failed("write", &failure);
    true
}

/// Takes the barriers out of a batch: they write nothing, and are answered once it is sent.
fn split_barriers(writes: Vec<CacheWrite>) -> (Vec<CacheWrite>, Vec<oneshot::Sender<()>>) {
    let mut barriers = Vec::new();
    let writes = writes
        .into_iter()
        .filter_map(|write| match write {
            CacheWrite::Barrier(done) => {
                barriers.push(done);
                None
            }
            write => Some(write),
        })
        .collect();
    (writes, barriers)
}

/// Folds a Save into the Save just before it when both are of one run and the second's
/// messages start where the first's end: one script call then does both.
fn coalesce(writes: Vec<CacheWrite>) -> Vec<CacheWrite> {
    let mut folded: Vec<CacheWrite> = Vec::with_capacity(writes.len());
    for write in writes {
        if let (
            Some(CacheWrite::Saved {
                keys,
                header,
                offset,
                messages,
            }),
            CacheWrite::Saved {
                keys: next_keys,
                header: next_header,
                offset: next_offset,
                messages: next_messages,
            },
        ) = (folded.last_mut(), &write)
            && *keys == *next_keys
            && *offset + messages.len() as u64 == *next_offset
        {
            *header = next_header.clone();
            messages.extend(next_messages.iter().cloned());
            continue;
        }
        folded.push(write);
    }
    folded
}

fn add(pipe: &mut redis::Pipeline, scripts: &Scripts, ttl_ms: u64, write: &CacheWrite) {
    match write {
        CacheWrite::Saved {
            keys,
            header,
            offset,
            messages,
        } => {
            let mut call = scripts.saved.prepare_invoke();
            call.key(keys.all().as_slice())
                .arg(ttl_ms)
                .arg(offset)
                .arg(header);
            for message in messages {
                call.arg(message);
            }
            pipe.invoke_script(&call).ignore();
        }
        CacheWrite::Filled {
            keys,
            header,
            messages,
            tools,
        } => {
            let mut call = scripts.filled.prepare_invoke();
            call.key(keys.all().as_slice())
                .arg(ttl_ms)
                .arg(header)
                .arg(messages.len());
            for item in messages.iter().chain(tools) {
                call.arg(item);
            }
            pipe.invoke_script(&call).ignore();
        }
        CacheWrite::ToolRecorded { keys, seq, tool } => {
            let mut call = scripts.tool_recorded.prepare_invoke();
            call.key(keys.all().as_slice())
                .arg(ttl_ms)
                .arg(seq)
                .arg(tool);
            pipe.invoke_script(&call).ignore();
        }
        CacheWrite::Rewound { keys, len } => {
            let mut call = scripts.rewound.prepare_invoke();
            call.key(keys.all().as_slice()).arg(len);
            pipe.invoke_script(&call).ignore();
        }
        CacheWrite::Evicted { keys } => {
            pipe.del(keys.all().as_slice()).ignore();
        }
        // Taken out of every batch before it gets here.
        CacheWrite::Barrier(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::{RunId, RunKey, Tenant};

    fn saved(run: &str, offset: u64, messages: &[&str], header: &str) -> CacheWrite {
        let run = RunKey::new(Tenant::default_tenant(), RunId::parse(run).unwrap());
        CacheWrite::Saved {
            keys: RunKeys::new("p", &run),
            header: header.as_bytes().to_vec(),
            offset,
            messages: messages.iter().map(|m| m.as_bytes().to_vec()).collect(),
        }
    }

    #[test]
    fn consecutive_saves_of_a_run_fold_into_one_and_others_stay_apart() {
        let folded = coalesce(vec![
            saved("a", 0, &["m0", "m1"], "h1"),
            saved("a", 2, &["m2"], "h2"),
            saved("b", 0, &["x"], "hb"),
            // After b, and not where a's log ends: kept as is.
            saved("a", 1, &["r1"], "h3"),
        ]);
        assert_eq!(folded.len(), 3);
        let CacheWrite::Saved {
            header,
            offset,
            messages,
            ..
        } = &folded[0]
        else {
            panic!("{folded:?}");
        };
        assert_eq!((header.as_slice(), *offset), (b"h2".as_slice(), 0));
        assert_eq!(messages.len(), 3);
        assert!(matches!(&folded[2], CacheWrite::Saved { offset: 1, .. }));
    }
}
