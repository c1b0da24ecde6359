//! Save: an optimistic one-statement fast path, and the locked transaction it falls back to.
//!
//! A Save's cost is dominated by its commit and its round trips. The fast path plans from the
//! cached run row and writes with one autocommit statement that applies the plan only if the run
//! row is still that version: one round trip, one commit, shared with other Saves in flight at
//! the same moment (see `batch`). Labelled Saves take it too: the unique index on labels decides
//! whether a label is free, in the same statement. Anything the cache cannot decide (no entry, a retry at a known
//! step, a replace, an offset inside the log) and any write that finds the row moved on goes to
//! the slow path, which locks the run and reads the truth, as the `CheckpointStore::save`
//! contract describes.

use std::borrow::Cow;
use std::time::SystemTime;

use tokio_postgres::types::ToSql;

use super::Connections;
use super::head_cache::CachedRun;
use super::rows::{RunRow, digest, digest_or_zero, signed, unsigned};
use super::sql;
use super::{Locked, PostgresStore};
use crate::error::{db, is_unique_violation, pool as pool_error};
use crate::statements::Statements;
use checkpointd_core::domain::{Checksum, Epoch, NewCheckpoint, SavedCheckpoint, Step};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::{
    self, ExistingCheckpoint, MessageRow, PrefixSource, RunHead, SaveContext, SavePlan, ToolSource,
};

/// A planned Save, ready to apply if the run row is still the version it was planned from.
pub(super) struct PlannedWrite<'a> {
    /// Borrowed on the caller's own path; owned once it waits in a batch queue.
    pub request: Cow<'a, NewCheckpoint>,
    pub id: String,
    pub checksum: Checksum,
    /// The messages the Save appends, with their chain values.
    pub rows: Vec<MessageRow>,
    /// The run's head once the write is applied.
    pub head: RunHead,
    /// The run row the plan was made from: its head and version.
    pub expected: RunHead,
    /// The journal entries the checkpoint covers: `expected.tools.len` on the fast path (the
    /// group commit stores that), possibly fewer on the slow path.
    pub tool_count: u64,
    pub version: SystemTime,
}

impl PlannedWrite<'_> {
    pub fn into_owned(self) -> PlannedWrite<'static> {
        PlannedWrite {
            request: Cow::Owned(self.request.into_owned()),
            id: self.id,
            checksum: self.checksum,
            rows: self.rows,
            head: self.head,
            expected: self.expected,
            tool_count: self.tool_count,
            version: self.version,
        }
    }

    /// The state and message bytes the write carries.
    pub fn bytes(&self) -> usize {
        let messages: usize = self.rows.iter().map(|row| row.message.content.len()).sum();
        self.request.state.len() + messages
    }
}

/// What the database did with a planned write that it applied.
#[derive(Clone, Copy, Debug)]
pub(super) struct Written {
    /// The run row's new version.
    pub version: SystemTime,
    pub created_at: SystemTime,
}

/// Applies one planned write alone, in autocommit. `Ok(None)`: nothing was applied, because the
/// run row moved on or a checkpoint already sits at the step.
pub(super) async fn write_alone(
    pool: &Connections,
    write: &PlannedWrite<'_>,
) -> Result<Option<Written>> {
    let client = pool.get().await.map_err(pool_error)?;
    let params = WriteParams::new(write);
    let written = if write.rows.is_empty() {
        let statement = pool
            .statements
            .prepare(&client, sql::WRITE_CHECKPOINT_BARE)
            .await
            .map_err(db)?;
        statement.query_opt(&client, &params.bare_params()).await
    } else {
        let statement = pool
            .statements
            .prepare(&client, sql::WRITE_CHECKPOINT)
            .await
            .map_err(db)?;
        statement.query_opt(&client, &params.params()).await
    };
    match written {
        Ok(Some(row)) => Ok(Some(Written {
            version: row.get(0),
            created_at: row.get(1),
        })),
        Ok(None) => Ok(None),
        Err(error) if is_unique_violation(&error) => Ok(None),
        Err(error) => Err(db(error)),
    }
}

/// The parameters of `sql::WRITE_CHECKPOINT`, borrowed from a planned write.
struct WriteParams<'a> {
    write: &'a PlannedWrite<'a>,
    tenant: &'a str,
    run_id: &'a str,
    step: i64,
    epoch: i64,
    checksum: &'a [u8],
    keys: Vec<&'a str>,
    values: Vec<&'a str>,
    new_message_count: i64,
    new_message_head: &'a [u8],
    seqs: Vec<i64>,
    roles: Vec<&'a str>,
    contents: Vec<&'a [u8]>,
    chains: Vec<&'a [u8]>,
    expected_message_count: i64,
    expected_message_head: &'a [u8],
    tool_count: i64,
    tool_head: &'a [u8],
    covered_tools: i64,
}

impl<'a> WriteParams<'a> {
    fn new(write: &'a PlannedWrite<'a>) -> Self {
        let request: &'a NewCheckpoint = &write.request;
        let rows = &write.rows;
        Self {
            write,
            tenant: request.run.tenant.as_str(),
            run_id: request.run.run_id.as_str(),
            step: request.step.as_i64(),
            epoch: signed(write.expected.epoch.get()),
            checksum: write.checksum.as_bytes(),
            keys: request.metadata.keys().map(String::as_str).collect(),
            values: request.metadata.values().map(String::as_str).collect(),
            new_message_count: signed(write.head.messages.len),
            new_message_head: &write.head.messages.head,
            seqs: rows.iter().map(|row| signed(row.seq)).collect(),
            roles: rows.iter().map(|row| row.message.role.as_str()).collect(),
            contents: rows
                .iter()
                .map(|row| row.message.content.as_slice())
                .collect(),
            chains: rows.iter().map(|row| row.chain.as_slice()).collect(),
            expected_message_count: signed(write.expected.messages.len),
            expected_message_head: &write.expected.messages.head,
            tool_count: signed(write.expected.tools.len),
            tool_head: &write.expected.tools.head,
            covered_tools: signed(write.tool_count),
        }
    }

    fn params(&self) -> [&(dyn ToSql + Sync); 23] {
        let request: &NewCheckpoint = &self.write.request;
        [
            &self.tenant,
            &self.run_id,
            &self.step,
            &self.write.id,
            &self.epoch,
            &request.content_type,
            &request.state,
            &self.keys,
            &self.values,
            &self.checksum,
            &self.new_message_count,
            &self.new_message_head,
            &self.seqs,
            &self.roles,
            &self.contents,
            &self.chains,
            &self.expected_message_count,
            &self.expected_message_head,
            &self.tool_count,
            &self.tool_head,
            &self.write.version,
            &request.label,
            &self.covered_tools,
        ]
    }

    /// The parameters of `sql::WRITE_CHECKPOINT_BARE`, for a write that appends no messages.
    fn bare_params(&self) -> [&(dyn ToSql + Sync); 16] {
        let request: &NewCheckpoint = &self.write.request;
        [
            &self.tenant,
            &self.run_id,
            &self.step,
            &self.write.id,
            &self.epoch,
            &request.content_type,
            &request.state,
            &self.keys,
            &self.values,
            &self.checksum,
            &self.expected_message_count,
            &self.expected_message_head,
            &self.tool_count,
            &self.tool_head,
            &self.write.version,
            &request.label,
        ]
    }
}

impl PostgresStore {
    pub(super) async fn save_checkpoint(&self, request: &NewCheckpoint) -> Result<SavedCheckpoint> {
        if let Some(cached) = self.cache.get(&request.run)
            && let Some(saved) = self.fast_save(request, cached).await?
        {
            return Ok(saved);
        }
        let mut client = self.client().await?;
        self.locked_save(&mut client, request).await
    }

    /// `Ok(None)` means "the cache could not decide": take the locked path.
    async fn fast_save(
        &self,
        request: &NewCheckpoint,
        cached: CachedRun,
    ) -> Result<Option<SavedCheckpoint>> {
        let Some(latest_step) = cached.latest_step else {
            return Ok(None);
        };
        // A step at or below the latest is a retry, a replace or an error: all need the truth.
        // So does a Save covering fewer journal entries than the cached head: the chain value it
        // covers is in the journal, not the cache (and the group commit stores the head's count).
        if latest_step.is_some_and(|latest| request.step <= latest)
            || SaveContext::prefix_source(&cached.head, request.message_offset)
                != PrefixSource::Head
            || SaveContext::tools_source(&cached.head, request.tool_count) != ToolSource::Head
        {
            return Ok(None);
        }
        // A label is planned as free: the partial unique index on (tenant, run_id, label) is the
        // check. A label another step carries fails the statement (a unique violation, nothing
        // applied), and the locked path then reads whose it is and answers `LabelTaken`.
        let context = SaveContext {
            head: cached.head,
            existing: None,
            latest_step,
            prefix: Some(cached.head.messages.head),
            label_step: None,
            tools: Some(cached.head.tools),
        };
        // A rejection planned from a possibly stale head may be wrong (e.g. an epoch that
        // another instance issued), so only the locked path may reject.
        let Ok(SavePlan::Write {
            id,
            checksum,
            rows,
            head,
            ..
        }) = plan::plan_save(request, &context)
        else {
            return Ok(None);
        };
        let write = PlannedWrite {
            request: Cow::Borrowed(request),
            id,
            checksum,
            rows,
            head,
            expected: cached.head,
            tool_count: cached.head.tools.len,
            version: cached.updated_at,
        };
        let (id, checksum) = (write.id.clone(), write.checksum);
        let Some(written) = self.batcher.submit(&self.pool, write).await? else {
            return Ok(None);
        };
        self.cache.put(
            &request.run,
            CachedRun {
                head,
                updated_at: written.version,
                latest_step: Some(Some(request.step)),
            },
        );
        Ok(Some(SavedCheckpoint {
            id,
            checksum,
            created_at: written.created_at,
            already_existed: false,
            tool_count: head.tools.len,
        }))
    }

    /// The contract's shape: lock the run, read the context, plan, apply, commit.
    async fn locked_save(
        &self,
        client: &mut deadpool_postgres::Client,
        request: &NewCheckpoint,
    ) -> Result<SavedCheckpoint> {
        let tx = client.transaction().await.map_err(db)?;
        let outcome = save_under_lock(&self.statements, &tx, request).await;
        self.finish(tx, &request.run, outcome).await
    }
}

/// Everything between BEGIN and COMMIT of a locked save; `finish` commits or rolls back.
async fn save_under_lock(
    statements: &Statements,
    tx: &deadpool_postgres::Transaction<'_>,
    request: &NewCheckpoint,
) -> Result<Locked<SavedCheckpoint>> {
    let run = &request.run;
    let (tenant, run_id) = (run.tenant.as_str(), run.run_id.as_str());
    let step = request.step.as_i64();
    // offset - 1 names the message whose chain is the prefix; -1 matches no row.
    let prefix_seq = signed(request.message_offset) - 1;
    // The entry whose chain a shorter tool_count covers; 0 matches no row.
    let tool_seq = signed(request.tool_count.unwrap_or(0));
    let (ensure, lock, read, delete, write) = tokio::try_join!(
        statements.prepare(tx, sql::ENSURE_RUN),
        statements.prepare(tx, sql::LOCK_RUN),
        statements.prepare(tx, sql::SAVE_CONTEXT),
        statements.prepare(tx, sql::DELETE_CHECKPOINT),
        statements.prepare(tx, sql::WRITE_CHECKPOINT),
    )
    .map_err(db)?;
    let run_params: [&(dyn ToSql + Sync); 2] = [&tenant, &run_id];
    let read_params: [&(dyn ToSql + Sync); 6] = [
        &tenant,
        &run_id,
        &step,
        &prefix_seq,
        &request.label,
        &tool_seq,
    ];
    // One round trip: the statements run in order, so the context is read under the lock.
    let (_, locked, context) = tokio::try_join!(
        ensure.execute(tx, &run_params),
        lock.query_opt(tx, &run_params),
        read.query_one(tx, &read_params),
    )
    .map_err(db)?;
    let Some(locked) = locked else {
        // Only a DeleteRun that committed while we waited for the lock gets here.
        return Err(Error::unavailable(format!(
            "run {run} was deleted while a save waited for it"
        )));
    };
    let RunRow { head, updated_at } = RunRow::decode(&locked, run)?;
    let latest_step = context
        .get::<_, Option<i64>>(0)
        .map(|step| Step::new(unsigned(step)));
    let prefix = match SaveContext::prefix_source(&head, request.message_offset) {
        PrefixSource::Head => Some(head.messages.head),
        PrefixSource::Empty => Some([0; 32]),
        PrefixSource::Gap => None,
        PrefixSource::StoredAt(_) => context
            .get::<_, Option<&[u8]>>(1)
            .map(|chain| digest(chain, "message chain value", run))
            .transpose()?,
    };
    let existing = context
        .get::<_, Option<String>>(2)
        .map(|id| ExistingCheckpoint {
            id,
            epoch: Epoch::new(unsigned(context.get(3))),
            checksum: Checksum::from_bytes(digest_or_zero(context.get(4))),
            created_at: context.get(5),
            quarantined: context.get(6),
            label: context.get(7),
        });
    let label_step = context
        .get::<_, Option<i64>>(8)
        .map(|step| Step::new(unsigned(step)));
    // SAVE_CONTEXT read the chain value of entry `tool_count` (column 9) under the lock.
    let tools = SaveContext::covered_tools(&head, request.tool_count, |_| {
        context
            .get::<_, Option<&[u8]>>(9)
            .map(|chain| digest(chain, "tool chain value", run))
            .transpose()
    })?;
    let context = SaveContext {
        head,
        existing,
        latest_step,
        prefix,
        label_step,
        tools,
    };
    // Whatever the outcome, this is the truth as of this version of the run row.
    let truth = CachedRun {
        head,
        updated_at,
        latest_step: Some(latest_step),
    };
    let (id, checksum, replace, rows, new_head, tool_count) =
        match plan::plan_save(request, &context) {
            Ok(SavePlan::Write {
                id,
                checksum,
                replace,
                rows,
                head,
                tool_count,
                ..
            }) => (id, checksum, replace, rows, head, tool_count),
            Ok(SavePlan::Unchanged(saved)) => return Ok(Locked::Release(Ok(saved), Some(truth))),
            Err(error) => return Ok(Locked::Release(Err(error), Some(truth))),
        };
    let planned = PlannedWrite {
        request: Cow::Borrowed(request),
        id,
        checksum,
        rows,
        head: new_head,
        expected: head,
        tool_count,
        version: updated_at,
    };
    let written = {
        let params = WriteParams::new(&planned);
        let params = params.params();
        if replace {
            let step_params: [&(dyn ToSql + Sync); 3] = [&tenant, &run_id, &step];
            let (_, written) = tokio::try_join!(
                delete.execute(tx, &step_params),
                write.query_opt(tx, &params),
            )
            .map_err(db)?;
            written
        } else {
            write.query_opt(tx, &params).await.map_err(db)?
        }
    };
    let written =
        written.ok_or_else(|| Error::internal(format!("run {run} changed under its row lock")))?;
    let latest_step = latest_step.map_or(request.step, |latest| latest.max(request.step));
    Ok(Locked::Commit(
        SavedCheckpoint {
            id: planned.id,
            checksum: planned.checksum,
            created_at: written.get(1),
            already_existed: false,
            tool_count: planned.tool_count,
        },
        Some(CachedRun {
            head: new_head,
            updated_at: written.get(0),
            latest_step: Some(Some(latest_step)),
        }),
    ))
}
