//! Cache writes: queued after the store's commit and applied in order by one task, so a Save
//! never waits for Redis and two writes to a run never land out of order.

use std::sync::Arc;

use redis::Script;
use tokio::sync::mpsc;

use super::keys::RunKeys;
use super::link::RedisLink;
use super::stats::CacheStats;

/// Writes waiting beyond this are dropped (and counted): the cache may lag, never block.
const QUEUE_DEPTH: usize = 4096;

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
    while let Some(write) = pending.recv().await {
        let Some(mut connection) = link.connection() else {
            CacheStats::bump(&link.stats.writes_dropped);
            continue;
        };
        let outcome = tokio::time::timeout(
            link.timeout(),
            apply(&scripts, &mut connection, ttl_ms, write),
        )
        .await;
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                CacheStats::bump(&link.stats.writes_dropped);
                link.failed("write", &error);
            }
            Err(_) => {
                CacheStats::bump(&link.stats.writes_dropped);
                link.failed("write", &"timed out");
            }
        }
    }
}

async fn apply(
    scripts: &Scripts,
    connection: &mut redis::aio::ConnectionManager,
    ttl_ms: u64,
    write: CacheWrite,
) -> redis::RedisResult<()> {
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
            call.invoke_async::<i64>(connection).await?;
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
            for item in messages.into_iter().chain(tools) {
                call.arg(item);
            }
            call.invoke_async::<i64>(connection).await?;
        }
        CacheWrite::ToolRecorded { keys, seq, tool } => {
            scripts
                .tool_recorded
                .key(keys.all().as_slice())
                .arg(ttl_ms)
                .arg(seq)
                .arg(tool)
                .invoke_async::<i64>(connection)
                .await?;
        }
        CacheWrite::Rewound { keys, len } => {
            scripts
                .rewound
                .key(keys.all().as_slice())
                .arg(len)
                .invoke_async::<i64>(connection)
                .await?;
        }
        CacheWrite::Evicted { keys } => {
            redis::cmd("DEL")
                .arg(keys.all().as_slice())
                .query_async::<i64>(connection)
                .await?;
        }
    }
    Ok(())
}
