//! Conversions between Postgres rows and domain values.
//!
//! Rows can be edited behind checkpointd's back (that is what checksums are for), so nothing
//! here panics on odd values. On the read path a malformed digest or count becomes a value that
//! fails verification, so the engine quarantines the checkpoint as it would any corrupt one; on
//! the write path a malformed run head is reported as data loss rather than built upon.

use std::collections::BTreeMap;
use std::time::SystemTime;

use tokio_postgres::Row;

use checkpointd_core::domain::{
    ArgumentsDigest, CallId, CheckpointSummary, Checksum, Digest32, EntryKind, Epoch, Message,
    MessageChain, Quarantine, RunId, RunInfo, RunKey, Step, StoredCheckpoint, ToolChain,
    ToolRecord, ToolWindow, WindowChains,
};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::plan::RunHead;
use checkpointd_storage::store::Snapshot;

/// A bigint column as a count or step; negative values (only possible by tampering) become
/// `u64::MAX`, which no verification accepts.
pub(super) fn unsigned(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

/// A u64 as bigint; every count and epoch comes from an i64 or a row count, so this saturates
/// only on values no run reaches.
pub(super) fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A stored digest; anything but 32 bytes reads as zeros, which never verifies.
pub(super) fn digest_or_zero(bytes: &[u8]) -> Digest32 {
    bytes.try_into().unwrap_or([0; 32])
}

/// A stored digest the write path builds on, where a malformed one must stop the write.
pub(super) fn digest(bytes: &[u8], what: &str, run: &RunKey) -> Result<Digest32> {
    bytes.try_into().map_err(|_| {
        Error::DataLoss(format!(
            "run {} has a corrupt {what} ({} bytes); resume the run to repair it",
            run.run_id,
            bytes.len()
        ))
    })
}

/// Timestamps go to Postgres, which keeps microseconds; truncating first means a value handed to
/// a client equals what a later read returns.
pub(super) use checkpointd_core::time::whole_micros;

/// The run row as `LOCK_RUN` and `BEGIN_RESUME` return it.
pub(super) struct RunRow {
    pub head: RunHead,
    pub updated_at: SystemTime,
}

impl RunRow {
    pub fn decode(row: &Row, run: &RunKey) -> Result<Self> {
        let message_head: &[u8] = row.get(2);
        let tool_head: &[u8] = row.get(4);
        Ok(Self {
            head: RunHead {
                epoch: Epoch::new(unsigned(row.get(0))),
                messages: MessageChain {
                    len: unsigned(row.get(1)),
                    head: digest(message_head, "message chain head", run)?,
                },
                tools: ToolChain {
                    len: unsigned(row.get(3)),
                    head: digest(tool_head, "tool chain head", run)?,
                },
            },
            updated_at: row.get(5),
        })
    }
}

/// A row of `TOOLS`, `JOURNAL_BY_CALL_ID` or `ENTRIES_BY_CALL_IDS`.
pub(super) fn tool_record(row: &Row) -> Result<ToolRecord> {
    let call_id: &str = row.get(0);
    let chain: &[u8] = row.get(7);
    Ok(ToolRecord {
        kind: entry_kind(row.get(8)),
        call_id: stored_call_id(call_id)?,
        tool_name: row.get(1),
        step: Step::new(unsigned(row.get(2))),
        output: row.get(3),
        is_error: row.get(4),
        seq: unsigned(row.get(5)),
        recorded_at: row.get(6),
        chain: digest_or_zero(chain),
        arguments_digest: ArgumentsDigest::stored(row.get(9)),
    })
}

fn entry_kind(intent: bool) -> EntryKind {
    if intent {
        EntryKind::Intent
    } else {
        EntryKind::Result
    }
}

fn stored_call_id(raw: &str) -> Result<CallId> {
    CallId::parse(raw).map_err(|_| Error::DataLoss(format!("stored call id {raw:?} is invalid")))
}

/// A row of `LIST`.
pub(super) fn summary(row: &Row) -> CheckpointSummary {
    let checksum: &[u8] = row.get(4);
    CheckpointSummary {
        step: Step::new(unsigned(row.get(0))),
        id: row.get(10),
        size_bytes: unsigned(i64::from(row.get::<_, i32>(1))),
        quarantine: quarantine(row, 2, 11),
        created_at: row.get(3),
        checksum: Checksum::from_bytes(digest_or_zero(checksum)),
        epoch: Epoch::new(unsigned(row.get(5))),
        message_count: unsigned(row.get(6)),
        label: row.get(7),
        metadata: metadata(row, 8, 9),
    }
}

/// The quarantine from its reason at `reason` and its time at `at` (NULL when it was
/// quarantined before the time was kept); `None` for a valid checkpoint.
fn quarantine(row: &Row, reason: usize, at: usize) -> Option<Quarantine> {
    row.get::<_, Option<String>>(reason)
        .map(|reason| Quarantine {
            reason,
            quarantined_at: row.get(at),
        })
}

/// A row of `RUN_INFO_*`; a stored run id that no longer parses is damage, never sent on.
pub(super) fn run_info(row: &Row) -> Result<RunInfo> {
    let raw: &str = row.get(0);
    let run_id = RunId::parse(raw)
        .map_err(|_| Error::DataLoss(format!("stored run id {raw:?} is invalid")))?;
    let step = |index| {
        row.get::<_, Option<i64>>(index)
            .map(|step| Step::new(unsigned(step)))
    };
    Ok(RunInfo {
        run_id,
        epoch: Epoch::new(unsigned(row.get(1))),
        message_count: unsigned(row.get(2)),
        tool_count: unsigned(row.get(3)),
        updated_at: row.get(4),
        latest_step: step(5),
        latest_valid_step: step(6),
        checkpoint_count: unsigned(row.get(7)),
    })
}

/// The metadata arrays at `keys` and `values`, zipped back into a map.
fn metadata(row: &Row, keys: usize, values: usize) -> BTreeMap<String, String> {
    // The metadata arrays are the one place tampering can change a value's shape (NULL
    // elements, more dimensions): such metadata reads as empty text, which fails the checksum.
    let keys: Vec<Option<String>> = row.try_get(keys).unwrap_or_default();
    let values: Vec<Option<String>> = row.try_get(values).unwrap_or_default();
    // Mismatched array lengths (tampering) drop pairs, which then fails the checksum.
    keys.into_iter()
        .zip(values)
        .map(|(key, value)| (key.unwrap_or_default(), value.unwrap_or_default()))
        .collect()
}

/// A row of `LOAD_LATEST` / `LOAD_AT`: the checkpoint, its messages and the tool journal.
pub(super) fn snapshot(row: &Row, run: &RunKey) -> Result<Snapshot> {
    // array_agg over no rows is NULL, hence the Options.
    let roles: Option<Vec<String>> = row.get(12);
    let contents: Option<Vec<Vec<u8>>> = row.get(13);
    let messages = roles
        .unwrap_or_default()
        .into_iter()
        .zip(contents.unwrap_or_default())
        .map(|(role, content)| Message { role, content })
        .collect();
    let mut checkpoint = stored_checkpoint(row, run, messages, 23, 32);
    let chain = |index: usize| {
        row.get::<_, Option<Vec<u8>>>(index)
            .map(|chain| digest_or_zero(&chain))
    };
    checkpoint.messages_from = unsigned(row.get(24));
    checkpoint.messages_end = unsigned(row.get(25));
    checkpoint.chains = WindowChains {
        before: chain(26),
        after: chain(27),
        head: chain(28),
    };
    let tool_window = ToolWindow {
        from: unsigned(row.get(29)),
        before: chain(30),
        covered: chain(31),
    };
    Ok(Snapshot {
        checkpoint,
        tools: journal(row)?,
        tool_window,
        verified: false,
        has_newer: row.get(33),
    })
}

/// A row of `LOAD_LATEST_BARE` / `LOAD_AT_BARE`, if it is the whole snapshot: `None` when the
/// checkpoint covers messages or the run has tool results, which that statement does not read.
pub(super) fn bare_snapshot(row: &Row, run: &RunKey) -> Option<Snapshot> {
    let message_count: i64 = row.get(7);
    let has_tools: bool = row.get(12);
    if message_count != 0 || has_tools {
        return None;
    }
    Some(Snapshot {
        checkpoint: stored_checkpoint(row, run, Vec::new(), 13, 14),
        tools: Vec::new(),
        tool_window: ToolWindow::WHOLE,
        verified: false,
        has_newer: row.get(15),
    })
}

/// The checkpoint columns (0..=11) shared by both load statements, the label at `label` and
/// the quarantine's time at `quarantined_at`.
fn stored_checkpoint(
    row: &Row,
    run: &RunKey,
    messages: Vec<Message>,
    label: usize,
    quarantined_at: usize,
) -> StoredCheckpoint {
    let checksum: &[u8] = row.get(9);
    StoredCheckpoint {
        id: row.get(1),
        run_id: run.run_id.clone(),
        step: Step::new(unsigned(row.get(0))),
        epoch: Epoch::new(unsigned(row.get(2))),
        content_type: row.get(3),
        state: row.get(4),
        metadata: metadata(row, 5, 6),
        messages,
        // The whole log unless the caller reads a window.
        messages_from: 0,
        messages_end: unsigned(row.get(7)),
        chains: WindowChains::default(),
        message_count: unsigned(row.get(7)),
        tool_count: unsigned(row.get(8)),
        checksum: Checksum::from_bytes(digest_or_zero(checksum)),
        created_at: row.get(10),
        quarantine: quarantine(row, 11, quarantined_at),
        label: row.get(label),
    }
}

/// The tool journal columns (14..=22, and the arguments digests at 34) of a snapshot row,
/// zipped back into records.
fn journal(row: &Row) -> Result<Vec<ToolRecord>> {
    let call_ids: Option<Vec<String>> = row.get(14);
    let Some(call_ids) = call_ids else {
        return Ok(Vec::new());
    };
    let tool_names: Vec<String> = row.get(15);
    let steps: Vec<i64> = row.get(16);
    let outputs: Vec<Vec<u8>> = row.get(17);
    let is_errors: Vec<bool> = row.get(18);
    let seqs: Vec<i64> = row.get(19);
    let recorded_ats: Vec<SystemTime> = row.get(20);
    let chains: Vec<Vec<u8>> = row.get(21);
    let intents: Vec<bool> = row.get(22);
    let arguments_digests: Vec<String> = row.get(34);
    let count = call_ids.len();
    let lengths = [
        tool_names.len(),
        steps.len(),
        outputs.len(),
        is_errors.len(),
        seqs.len(),
        recorded_ats.len(),
        chains.len(),
        intents.len(),
        arguments_digests.len(),
    ];
    // The arrays come from one aggregate over the same rows, so this only guards the indexing.
    if lengths.iter().any(|length| *length != count) {
        return Err(Error::internal("tool journal arrays differ in length"));
    }
    let mut tool_names = tool_names.into_iter();
    let mut outputs = outputs.into_iter();
    let mut arguments_digests = arguments_digests.into_iter();
    (0..count)
        .map(|index| {
            Ok(ToolRecord {
                kind: entry_kind(intents[index]),
                call_id: stored_call_id(&call_ids[index])?,
                tool_name: tool_names.next().unwrap_or_default(),
                step: Step::new(unsigned(steps[index])),
                output: outputs.next().unwrap_or_default(),
                is_error: is_errors[index],
                seq: unsigned(seqs[index]),
                recorded_at: recorded_ats[index],
                chain: digest_or_zero(&chains[index]),
                arguments_digest: ArgumentsDigest::stored(
                    arguments_digests.next().unwrap_or_default(),
                ),
            })
        })
        .collect()
}
