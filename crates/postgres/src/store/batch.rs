//! Group commit for the Save fast path: Saves that arrive together share one statement and one
//! commit.
//!
//! A commit, with its round trip, costs Postgres several times what inserting one more small row
//! does, so when many agents save at once, one multi-row statement (`sql::WRITE_CHECKPOINTS`)
//! does the work of many for a fraction of the CPU. Nothing ever waits to form a batch:
//!
//! * a Save that finds no fast-path write in flight writes alone at once, as it would without
//!   batching (one client never pays for this);
//! * Saves that arrive while a write is in flight queue up, and the first of them to get the turn
//!   writes every queued Save in one statement;
//! * a large Save (`SOLO_BYTES` and up) always writes alone and at once: its rows cost far more
//!   than a commit, so spreading large Saves over connections beats sharing one.
//!
//! Every Save answers only after the commit that made it durable, and each one is applied exactly
//! as it would be alone: only if its run row is still the version it was planned from.
//!
//! One batch at a time: the turn is held until the batch's commit. Its statement locks many run
//! rows, and with no other multi-row writer in flight no two writers can wait on each other's
//! rows (every other write locks one run row). That leaves one connection busy with batches; the
//! turn is no throughput limit in practice, as each batch takes every Save queued meanwhile.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tokio::sync::{Semaphore, oneshot};
use tokio_postgres::types::ToSql;

use super::Connections;
use super::rows::signed;
use super::save::{PlannedWrite, Written, write_alone};
use super::sql;
use crate::error::{db, pool as pool_error};
use checkpointd_core::domain::NewCheckpoint;
use checkpointd_core::error::{Error, Result};

/// Most Saves one statement writes, and most state and message bytes it carries; the rest of the
/// queue goes in the next batch.
const MAX_BATCH: usize = 64;
const MAX_BATCH_BYTES: usize = 4 << 20;
/// Saves carrying at least this many bytes write alone and at once.
const SOLO_BYTES: usize = 64 << 10;

/// `Ok(None)`: not applied, because the run row moved on or the step is taken.
type Outcome = Result<Option<Written>>;

struct Pending {
    write: PlannedWrite<'static>,
    answer: oneshot::Sender<Outcome>,
}

pub(super) struct SaveBatcher {
    queue: Mutex<Vec<Pending>>,
    /// The turn to write: whoever holds it has a write in flight.
    turn: Arc<Semaphore>,
    /// How many Saves were handed to the batcher: the tests' evidence of which path a Save took.
    #[cfg(test)]
    submitted: std::sync::atomic::AtomicUsize,
}

impl SaveBatcher {
    pub fn new() -> Self {
        Self {
            queue: Mutex::new(Vec::new()),
            turn: Arc::new(Semaphore::new(1)),
            #[cfg(test)]
            submitted: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// How many Saves took the fast path to the batcher so far.
    #[cfg(test)]
    pub fn submitted(&self) -> usize {
        self.submitted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Applies `write` if its run row is unchanged, alone or with others; answers after the
    /// commit.
    pub async fn submit(&self, pool: &Connections, write: PlannedWrite<'_>) -> Outcome {
        #[cfg(test)]
        self.submitted
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if write.bytes() >= SOLO_BYTES {
            return write_alone(pool, &write).await;
        }
        if let Ok(_turn) = self.turn.try_acquire() {
            // Nothing in flight, so no one to share a commit with.
            return write_alone(pool, &write).await;
        }
        let (answer, mut answered) = oneshot::channel();
        self.lock().push(Pending {
            write: write.into_owned(),
            answer,
        });
        loop {
            tokio::select! {
                biased;
                outcome = &mut answered => return received(outcome),
                turn = self.turn.clone().acquire_owned() => {
                    let Ok(turn) = turn else {
                        return Err(Error::internal("the save batcher is closed"));
                    };
                    let batch = self.take_batch();
                    if batch.is_empty() {
                        // Another caller's batch took this Save; it answers once committed.
                        drop(turn);
                        return received(answered.await);
                    }
                    let pool = pool.clone();
                    // On a task of its own, so that the other Saves in the batch still get
                    // their answers if this caller goes away (a cancelled RPC) meanwhile.
                    let _ = tokio::spawn(async move {
                        write_batch(&pool, batch).await;
                        drop(turn);
                    })
                    .await;
                    // This Save was in the batch and is answered, or did not fit in it and
                    // waits for the next turn.
                }
            }
        }
    }

    /// The head of the queue, up to the batch limits, sorted by run so that batches always lock
    /// run rows in one order.
    fn take_batch(&self) -> Vec<Pending> {
        let mut queue = self.lock();
        let mut bytes = 0;
        let mut count = 0;
        for pending in queue.iter() {
            bytes += pending.write.bytes();
            if count == MAX_BATCH || (count > 0 && bytes > MAX_BATCH_BYTES) {
                break;
            }
            count += 1;
        }
        let mut batch: Vec<Pending> = queue.drain(..count).collect();
        drop(queue);
        batch.sort_by(|a, b| {
            let (a, b) = (&a.write.request.run, &b.write.request.run);
            (a.tenant.as_str(), a.run_id.as_str()).cmp(&(b.tenant.as_str(), b.run_id.as_str()))
        });
        batch
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pending>> {
        // A push or a drain cannot stop half-way, so a poisoned queue is still consistent.
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn received(outcome: Result<Outcome, oneshot::error::RecvError>) -> Outcome {
    outcome.unwrap_or_else(|_| Err(Error::internal("a batched save was dropped unanswered")))
}

/// Writes a batch and answers every Save in it.
async fn write_batch(pool: &Connections, mut batch: Vec<Pending>) {
    if batch.len() == 1
        && let Some(Pending { write, answer }) = batch.pop()
    {
        let _ = answer.send(write_alone(pool, &write).await);
        return;
    }
    match write_together(pool, &batch).await {
        Ok(outcomes) => {
            for (pending, outcome) in batch.into_iter().zip(outcomes) {
                let _ = pending.answer.send(Ok(outcome));
            }
        }
        // Postgres refused the statement, so nothing was applied: most likely a step that is
        // taken already (a cache that missed another instance's write) or a label another
        // checkpoint of the run carries, which fails the whole batch. Each Save now writes alone
        // and gets its own answer.
        Err(Failure::Refused(error)) => {
            tracing::debug!(
                error = %error,
                saves = batch.len(),
                "batched save refused; writing each alone"
            );
            let mut alone = tokio::task::JoinSet::new();
            for Pending { write, answer } in batch {
                let pool = pool.clone();
                alone.spawn(async move {
                    let _ = answer.send(write_alone(&pool, &write).await);
                });
            }
            while alone.join_next().await.is_some() {}
        }
        // No connection, or it broke: every Save gets the error a lone Save would have got.
        // Should the statement have committed before the connection broke, a retried Save finds
        // its checkpoint stored and is answered as an identical retry.
        Err(Failure::Failed(error)) => {
            for pending in batch {
                let _ = pending.answer.send(Err(error.clone()));
            }
        }
    }
}

/// Why a batch statement failed.
enum Failure {
    /// Postgres answered with an error: the statement applied nothing.
    Refused(tokio_postgres::Error),
    /// No connection, a connection that broke, or an answer that makes no sense: the outcome is
    /// unknown, and every Save gets this error.
    Failed(Error),
}

/// The whole batch in one `sql::WRITE_CHECKPOINTS` statement; the outcomes in batch order.
async fn write_together(
    pool: &Connections,
    batch: &[Pending],
) -> Result<Vec<Option<Written>>, Failure> {
    let failed = |error: tokio_postgres::Error| {
        if error.as_db_error().is_some() {
            Failure::Refused(error)
        } else {
            Failure::Failed(db(error))
        }
    };
    let client = pool
        .get()
        .await
        .map_err(|error| Failure::Failed(pool_error(error)))?;
    let statement = pool
        .statements
        .prepare(&client, sql::WRITE_CHECKPOINTS)
        .await
        .map_err(failed)?;
    let columns = BatchColumns::new(batch);
    let rows = statement
        .query(&client, &columns.params())
        .await
        .map_err(failed)?;
    let mut outcomes = vec![None; batch.len()];
    for row in rows {
        let ord: i32 = row.get(0);
        let outcome = usize::try_from(ord)
            .ok()
            .and_then(|ord| outcomes.get_mut(ord))
            .ok_or_else(|| {
                Failure::Failed(Error::internal(format!(
                    "the batch statement answered for save {ord} of {}",
                    batch.len()
                )))
            })?;
        *outcome = Some(Written {
            version: row.get(1),
            created_at: row.get(2),
        });
    }
    Ok(outcomes)
}

/// The parameters of `sql::WRITE_CHECKPOINTS`: one array per column, Saves in batch order
/// (`ord`), metadata and messages flattened with the `ord` of their Save.
#[derive(Default)]
struct BatchColumns<'a> {
    ords: Vec<i32>,
    tenants: Vec<&'a str>,
    run_ids: Vec<&'a str>,
    steps: Vec<i64>,
    ids: Vec<&'a str>,
    epochs: Vec<i64>,
    content_types: Vec<&'a str>,
    states: Vec<&'a [u8]>,
    checksums: Vec<&'a [u8]>,
    new_message_counts: Vec<i64>,
    new_message_heads: Vec<&'a [u8]>,
    message_counts: Vec<i64>,
    message_heads: Vec<&'a [u8]>,
    tool_counts: Vec<i64>,
    tool_heads: Vec<&'a [u8]>,
    versions: Vec<SystemTime>,
    metadata_ords: Vec<i32>,
    metadata_keys: Vec<&'a str>,
    metadata_values: Vec<&'a str>,
    message_ords: Vec<i32>,
    message_seqs: Vec<i64>,
    message_roles: Vec<&'a str>,
    message_contents: Vec<&'a [u8]>,
    message_chains: Vec<&'a [u8]>,
    labels: Vec<Option<&'a str>>,
}

impl<'a> BatchColumns<'a> {
    fn new(batch: &'a [Pending]) -> Self {
        let mut columns = Self::default();
        for (ord, pending) in (0..).zip(batch) {
            let write = &pending.write;
            let request: &'a NewCheckpoint = &write.request;
            columns.ords.push(ord);
            columns.tenants.push(request.run.tenant.as_str());
            columns.run_ids.push(request.run.run_id.as_str());
            columns.steps.push(request.step.as_i64());
            columns.ids.push(&write.id);
            columns.epochs.push(signed(write.expected.epoch.get()));
            columns.content_types.push(&request.content_type);
            columns.states.push(&request.state);
            columns.checksums.push(write.checksum.as_bytes());
            let new_count = signed(write.head.messages.len);
            columns.new_message_counts.push(new_count);
            columns.new_message_heads.push(&write.head.messages.head);
            let count = signed(write.expected.messages.len);
            columns.message_counts.push(count);
            columns.message_heads.push(&write.expected.messages.head);
            columns.tool_counts.push(signed(write.expected.tools.len));
            columns.tool_heads.push(&write.expected.tools.head);
            columns.versions.push(write.version);
            columns.labels.push(request.label.as_deref());
            for (key, value) in &request.metadata {
                columns.metadata_ords.push(ord);
                columns.metadata_keys.push(key);
                columns.metadata_values.push(value);
            }
            for row in &write.rows {
                columns.message_ords.push(ord);
                columns.message_seqs.push(signed(row.seq));
                columns.message_roles.push(&row.message.role);
                columns.message_contents.push(&row.message.content);
                columns.message_chains.push(&row.chain);
            }
        }
        columns
    }

    fn params(&self) -> [&(dyn ToSql + Sync); 25] {
        [
            &self.ords,
            &self.tenants,
            &self.run_ids,
            &self.steps,
            &self.ids,
            &self.epochs,
            &self.content_types,
            &self.states,
            &self.checksums,
            &self.new_message_counts,
            &self.new_message_heads,
            &self.message_counts,
            &self.message_heads,
            &self.tool_counts,
            &self.tool_heads,
            &self.versions,
            &self.metadata_ords,
            &self.metadata_keys,
            &self.metadata_values,
            &self.message_ords,
            &self.message_seqs,
            &self.message_roles,
            &self.message_contents,
            &self.message_chains,
            &self.labels,
        ]
    }
}

/// Writes `writes` as one batch, as a turn's holder would; the outcomes in the same order.
#[cfg(test)]
pub(super) async fn write_as_batch(
    pool: &Connections,
    writes: Vec<PlannedWrite<'static>>,
) -> Vec<Outcome> {
    let mut batch = Vec::new();
    let mut answers = Vec::new();
    for write in writes {
        let (answer, answered) = oneshot::channel();
        batch.push(Pending { write, answer });
        answers.push(answered);
    }
    write_batch(pool, batch).await;
    let mut outcomes = Vec::new();
    for answered in answers {
        outcomes.push(received(answered.await));
    }
    outcomes
}
