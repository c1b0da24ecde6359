//! The SQL text of every statement the Postgres store prepares, in one place.
//!
//! Every statement is scoped by `tenant = $1 AND run_id = $2` and reads through a primary-key or
//! unique index, so its cost depends on the run's size at most, never on the table's.

/// Creates the run row if it is missing, so there is a row to lock.
pub(super) const ENSURE_RUN: &str = "\
INSERT INTO runs (tenant, run_id) VALUES ($1, $2) ON CONFLICT (tenant, run_id) DO NOTHING";

/// Locks the run row: every writer of a run queues here (or on the fast path's UPDATE).
pub(super) const LOCK_RUN: &str = "\
SELECT epoch, message_count, message_head, tool_count, tool_head, updated_at
FROM runs WHERE tenant = $1 AND run_id = $2 FOR UPDATE";

/// Everything else `plan_save` needs, as one row. It runs as a statement after `LOCK_RUN`, so in
/// READ COMMITTED it takes a fresh snapshot that sees every write committed before the lock was
/// granted. `$3` is the step, `$4` the sequence number whose chain is the prefix (offset - 1),
/// `$5` the Save's label (NULL for none; `label = NULL` matches nothing), `$6` the journal entry
/// whose chain the checkpoint covers (its `tool_count`; 0, which no entry has, for none).
pub(super) const SAVE_CONTEXT: &str = "\
SELECT
    (SELECT step FROM checkpoints
      WHERE tenant = $1 AND run_id = $2 AND quarantine_reason IS NULL
      ORDER BY step DESC LIMIT 1) AS latest_step,
    (SELECT chain FROM messages WHERE tenant = $1 AND run_id = $2 AND seq = $4) AS prefix,
    existing.id, existing.epoch, existing.checksum, existing.created_at,
    existing.quarantine_reason IS NOT NULL AS existing_quarantined,
    existing.label,
    (SELECT step FROM checkpoints
      WHERE tenant = $1 AND run_id = $2 AND label = $5::text) AS label_step,
    (SELECT chain FROM tool_results WHERE tenant = $1 AND run_id = $2 AND seq = $6) AS tool_prefix
FROM (SELECT 1) AS one
LEFT JOIN checkpoints AS existing
    ON existing.tenant = $1 AND existing.run_id = $2 AND existing.step = $3";

/// The slow path of a Save that replaces a checkpoint from an older epoch.
pub(super) const DELETE_CHECKPOINT: &str = "\
DELETE FROM checkpoints WHERE tenant = $1 AND run_id = $2 AND step = $3";

/// Every write bumps `updated_at` to a value strictly above the previous one, so it works as a
/// row version even when the clock stalls or steps back. Written for Citus too (tables
/// distributed by tenant), which refuses a volatile function (`clock_timestamp()`) in an UPDATE,
/// a stable one applied to a column (`timestamptz + interval` depends on the time zone), and
/// any non-immutable one in an upsert's DO UPDATE: the time is `statement_timestamp()` (stable,
/// evaluated once by the coordinator) and the step is taken in UTC, where it is immutable.
macro_rules! bump_updated_at {
    () => {
        "updated_at = greatest(statement_timestamp(),
                               ((updated_at AT TIME ZONE 'UTC') + interval '1 microsecond')
                                   AT TIME ZONE 'UTC')"
    };
}

/// Writes a planned checkpoint in one statement: moves the run's head, inserts the checkpoint and
/// appends the messages, but only if the run row still is exactly the version the plan was made
/// from. Zero rows back means "the run moved on": the caller falls back to the locked path.
///
/// The fast path runs it alone, in autocommit: one round trip, one commit. A plain INSERT makes a
/// checkpoint already at the step fail the whole statement (unique violation), nothing applied.
/// The slow path runs it inside its transaction, where the condition holds by construction.
///
/// $1 tenant, $2 run_id, $3 step, $4 id, $5 epoch, $6 content_type, $7 state, $8 metadata keys,
/// $9 metadata values, $10 checksum, $11 new message_count, $12 new message_head,
/// $13-$16 appended messages (seq, role, content, chain), then the expected run row:
/// $17 message_count, $18 message_head, $19 tool_count, $20 tool_head, $21 updated_at;
/// $22 the label (NULL for none); $23 the checkpoint's tool_count, the journal entries it covers
/// (at most $19: a Save may cover fewer than the journal holds, see `SaveRequest.tool_count`).
pub(super) const WRITE_CHECKPOINT: &str = concat!(
    "WITH run AS (
    UPDATE runs SET message_count = $11, message_head = $12, ",
    bump_updated_at!(),
    "
    WHERE tenant = $1 AND run_id = $2 AND epoch = $5
      AND message_count = $17 AND message_head = $18
      AND tool_count = $19 AND tool_head = $20 AND updated_at = $21
    RETURNING updated_at
), checkpoint AS (
    INSERT INTO checkpoints (tenant, run_id, step, id, epoch, content_type, state,
                             metadata_keys, metadata_values, message_count, tool_count,
                             checksum, created_at, label)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $11, $23::bigint, $10, now(), $22::text FROM run
    RETURNING created_at
), appended AS (
    INSERT INTO messages (tenant, run_id, seq, role, content, chain)
    SELECT $1, $2, m.seq, m.role, m.content, m.chain
    FROM run, unnest($13::bigint[], $14::text[], $15::bytea[], $16::bytea[])
        AS m(seq, role, content, chain)
)
SELECT run.updated_at, checkpoint.created_at FROM run, checkpoint"
);

/// `WRITE_CHECKPOINT` for a Save that appends no messages, so it leaves the message head as it
/// is: the same condition on the run row, one data-modifying step fewer. The answer is read
/// from both steps in a final SELECT, as `WRITE_CHECKPOINT` does: Citus sends an
/// `INSERT ... RETURNING (SELECT ... FROM run)` to a worker without the `run` it names.
///
/// $1 tenant, $2 run_id, $3 step, $4 id, $5 epoch, $6 content_type, $7 state, $8 metadata keys,
/// $9 metadata values, $10 checksum, then the expected run row: $11 message_count,
/// $12 message_head, $13 tool_count, $14 tool_head, $15 updated_at; $16 the label (NULL for
/// none).
pub(super) const WRITE_CHECKPOINT_BARE: &str = concat!(
    "WITH run AS (
    UPDATE runs SET ",
    bump_updated_at!(),
    "
    WHERE tenant = $1 AND run_id = $2 AND epoch = $5
      AND message_count = $11 AND message_head = $12
      AND tool_count = $13 AND tool_head = $14 AND updated_at = $15
    RETURNING updated_at
), checkpoint AS (
    INSERT INTO checkpoints (tenant, run_id, step, id, epoch, content_type, state,
                             metadata_keys, metadata_values, message_count, tool_count,
                             checksum, created_at, label)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $11, $13, $10, now(), $16::text FROM run
    RETURNING created_at
)
SELECT run.updated_at, checkpoint.created_at FROM run, checkpoint"
);

/// Group commit: several planned checkpoints of `WRITE_CHECKPOINT` in one statement, so one
/// round trip and one commit. Each item is applied exactly as `WRITE_CHECKPOINT` applies one:
/// only if its run row still is the version its plan was made from; the rows that come back
/// name the items applied (by `ord`), every other item changed nothing and takes the slow path.
/// Every applied item's checkpoint is inserted (data-modifying CTEs always run to completion),
/// with `created_at` the statement's `now()`, which the answer repeats.
///
/// One item per row of the `input` arrays:
/// $1 ord, $2 tenant, $3 run_id, $4 step, $5 id, $6 epoch, $7 content_type, $8 state,
/// $9 checksum, $10 new message_count, $11 new message_head, then the expected run row:
/// $12 message_count, $13 message_head, $14 tool_count, $15 tool_head, $16 updated_at;
/// $25 the label (NULL for none).
/// Metadata and appended messages are flattened, each entry naming its item's `ord`:
/// $17-$19 metadata (ord, key, value) in key order; $20-$24 messages (ord, seq, role, content,
/// chain).
///
/// Each checkpoint covers the whole journal of its expected run row (`tool_count`): the fast
/// path plans only Saves that cover exactly that, and leaves a shorter `tool_count` to the slow
/// path, which reads the covered chain value under the lock.
///
/// Two items of one run never both apply: a run row is updated at most once per statement, and
/// the other item's expected version is then stale. A checkpoint already at an item's step fails
/// the whole statement (unique violation) with nothing applied, and so does a label another
/// checkpoint of the run carries (the partial unique index on labels); the caller then writes
/// each item alone. The run rows are updated in `input` order (a nested loop over the primary key), which
/// the caller sorts, so batches lock rows in one order.
pub(super) const WRITE_CHECKPOINTS: &str = "\
WITH input AS (
    SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::bigint[], $5::text[],
                         $6::bigint[], $7::text[], $9::bytea[], $10::bigint[], $11::bytea[],
                         $12::bigint[], $13::bytea[], $14::bigint[], $15::bytea[],
                         $16::timestamptz[], $25::text[])
        AS i(ord, tenant, run_id, step, id, epoch, content_type, checksum, new_message_count,
             new_message_head, message_count, message_head, tool_count, tool_head, updated_at,
             label)
), run AS (
    UPDATE runs AS r SET message_count = i.new_message_count, message_head = i.new_message_head,
        updated_at = greatest(statement_timestamp(),
                              ((r.updated_at AT TIME ZONE 'UTC') + interval '1 microsecond')
                                  AT TIME ZONE 'UTC')
    FROM input AS i
    WHERE r.tenant = i.tenant AND r.run_id = i.run_id AND r.epoch = i.epoch
      AND r.message_count = i.message_count AND r.message_head = i.message_head
      AND r.tool_count = i.tool_count AND r.tool_head = i.tool_head
      AND r.updated_at = i.updated_at
    RETURNING i.ord, r.updated_at
), metadata AS (
    SELECT m.ord, array_agg(m.key ORDER BY m.position) AS keys,
           array_agg(m.value ORDER BY m.position) AS vals
    FROM unnest($17::int[], $18::text[], $19::text[]) WITH ORDINALITY
        AS m(ord, key, value, position)
    GROUP BY m.ord
), checkpoint AS (
    INSERT INTO checkpoints (tenant, run_id, step, id, epoch, content_type, state,
                             metadata_keys, metadata_values, message_count, tool_count,
                             checksum, created_at, label)
    SELECT i.tenant, i.run_id, i.step, i.id, i.epoch, i.content_type, s.state,
           coalesce(metadata.keys, '{}'), coalesce(metadata.vals, '{}'),
           i.new_message_count, i.tool_count, i.checksum, now(), i.label
    FROM unnest($1::int[], $8::bytea[]) AS s(ord, state)
    JOIN run USING (ord) JOIN input AS i USING (ord) LEFT JOIN metadata USING (ord)
), appended AS (
    INSERT INTO messages (tenant, run_id, seq, role, content, chain)
    SELECT i.tenant, i.run_id, m.seq, m.role, m.content, m.chain
    FROM unnest($20::int[], $21::bigint[], $22::text[], $23::bytea[], $24::bytea[])
        AS m(ord, seq, role, content, chain)
    JOIN run USING (ord) JOIN input AS i USING (ord)
)
SELECT ord, updated_at, now() AS created_at FROM run";

/// The stored entries (results and intents) of the call ids `$3`, for a RecordToolResults
/// batch under the run lock: a result is refused when its call's intent has other arguments.
pub(super) const ENTRIES_BY_CALL_IDS: &str = "\
SELECT call_id, tool_name, step, output, is_error, seq, recorded_at, chain, intent,
       arguments_digest
FROM tool_results WHERE tenant = $1 AND run_id = $2 AND call_id = ANY($3)";

/// Writes a batch of results in one statement, one array element per entry, under the run lock.
pub(super) const INSERT_RESULTS: &str = "\
INSERT INTO tool_results (tenant, run_id, seq, call_id, tool_name, step, output, is_error, chain,
                          recorded_at, arguments_digest)
SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::bytea[],
                             $8::boolean[], $9::bytea[], $10::timestamptz[], $11::text[])";

/// Moves the run's tool chain head after a batch and returns the run row's new version.
pub(super) const SET_TOOL_HEAD_RETURNING: &str = concat!(
    "UPDATE runs SET tool_count = $3, tool_head = $4, ",
    bump_updated_at!(),
    " WHERE tenant = $1 AND run_id = $2 RETURNING updated_at"
);

/// Every journal entry of a call: its intent and its result, when journalled.
pub(super) const JOURNAL_BY_CALL_ID: &str = "\
SELECT call_id, tool_name, step, output, is_error, seq, recorded_at, chain, intent,
       arguments_digest
FROM tool_results WHERE tenant = $1 AND run_id = $2 AND call_id = $3";

/// Writes one journal entry, result or intent, under the run lock.
pub(super) const INSERT_JOURNAL_ENTRY: &str = "\
INSERT INTO tool_results (tenant, run_id, seq, call_id, tool_name, step, output, is_error, chain,
                          recorded_at, intent, arguments_digest)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";

/// Moves the run's tool chain head, under the run lock.
pub(super) const SET_TOOL_HEAD: &str = concat!(
    "UPDATE runs SET tool_count = $3, tool_head = $4, ",
    bump_updated_at!(),
    " WHERE tenant = $1 AND run_id = $2"
);

/// A journal repair drops the entries from seq `$3` on before writing their replacements.
pub(super) const TRUNCATE_JOURNAL: &str =
    "DELETE FROM tool_results WHERE tenant = $1 AND run_id = $2 AND seq >= $3";

/// Quarantines the checkpoints that cover journal entry `$3` or later, at the repair's time `$5`.
pub(super) const QUARANTINE_COVERING: &str = "\
UPDATE checkpoints SET quarantine_reason = $4, quarantined_at = $5
WHERE tenant = $1 AND run_id = $2 AND tool_count >= $3 AND quarantine_reason IS NULL
RETURNING step";

/// Records a journal repair with the run's next action number.
pub(super) const INSERT_JOURNAL_ACTION: &str = "\
INSERT INTO journal_actions (tenant, run_id, seq, call_id, action, actor, detail, acted_at)
SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4, $5, $6, $7
FROM journal_actions WHERE tenant = $1 AND run_id = $2";

pub(super) const JOURNAL_ACTIONS: &str = "\
SELECT call_id, action, actor, detail, acted_at FROM journal_actions
WHERE tenant = $1 AND run_id = $2 ORDER BY seq";

pub(super) const DELETE_JOURNAL_ACTIONS: &str =
    "DELETE FROM journal_actions WHERE tenant = $1 AND run_id = $2";

/// Journals a tool result, conditional on the run row's version like `WRITE_CHECKPOINT`.
///
/// $1 tenant, $2 run_id, $3 call_id, $4 tool_name, $5 step, $6 output, $7 is_error, $8 chain,
/// $9 new tool_count (the record's seq), $10 recorded_at, $11 epoch, then the expected run row:
/// $12 tool_count, $13 tool_head, $14 updated_at; $15 the arguments digest. The new tool_head
/// is the record's chain. An intent of the call journalled with another non-empty digest
/// matches no row too, so the locked path reads it and refuses (`ArgumentsMismatch`).
pub(super) const WRITE_TOOL: &str = concat!(
    "WITH run AS (
    UPDATE runs SET tool_count = $9, tool_head = $8, ",
    bump_updated_at!(),
    "
    WHERE tenant = $1 AND run_id = $2 AND epoch = $11
      AND tool_count = $12 AND tool_head = $13 AND updated_at = $14
      AND NOT EXISTS (SELECT 1 FROM tool_results AS i
                       WHERE i.tenant = $1 AND i.run_id = $2 AND i.call_id = $3 AND i.intent
                         AND $15::text <> '' AND i.arguments_digest <> ''
                         AND i.arguments_digest <> $15::text)
    RETURNING updated_at
), journalled AS (
    INSERT INTO tool_results (tenant, run_id, seq, call_id, tool_name, step, output, is_error,
                              chain, recorded_at, arguments_digest)
    SELECT $1, $2, $9, $3, $4, $5, $6, $7, $8, $10, $15 FROM run
    RETURNING seq
)
SELECT run.updated_at FROM run, journalled"
);

/// One checkpoint with a window of its messages and the run's tool journal, in one statement
/// and therefore one snapshot and one round trip. The window starts at `$4` (clamped to the
/// checkpoint's `message_count`) and stops before the first message after its first whose
/// running content size passes `$5` bytes ([`checkpointd_core::domain::WindowCut`]'s rule); the sizes come
/// from `octet_length` (no body of a stored-apart message is read for it), and the running sum
/// stops at the first message past the window (`LIMIT 1` over the ordered window aggregate).
/// The chain digests stored around the window come with it. The checkpoint is picked first in a LIMIT 1 subquery, so the
/// lateral reads run once. Aggregating from an ordered subquery keeps `seq` order.
///
/// The journal is read from seq `j.tools_from` on, by `$6` (the store contract's
/// `JournalScope`): 0 (all) from 1; 1 (step) from the first entry of the checkpoint's step,
/// found through `tool_results_by_step` (the journal's length + 1 when the step has none);
/// 2 (none) from `ToolWindow::NO_ENTRIES` (`i64::MAX`), past every entry. Outside "all" the
/// digests stored with entry `tools_from - 1` and entry `tool_count` come too, each read as
/// the first entry from that seq on in seq order: only the primary key serves that order, so
/// the planner never answers these lookups by scanning the run in `tool_results_by_step`
/// (which it did for a plain `seq = ...` on a table without statistics yet: 0.6 ms each for
/// a 10,000-entry journal).
macro_rules! snapshot_sql {
    ($($filter:tt)+) => {
        concat!(
            "SELECT c.step, c.id, c.epoch, c.content_type, c.state, c.metadata_keys,
       c.metadata_values, c.message_count, c.tool_count, c.checksum, c.created_at,
       c.quarantine_reason,
       m.roles, m.contents,
       t.call_ids, t.tool_names, t.steps, t.outputs, t.is_errors, t.seqs, t.recorded_ats, t.chains,
       t.intents, c.label,
       w.from_seq, w.end_seq,
       (SELECT chain FROM messages
         WHERE tenant = $1 AND run_id = $2 AND seq = w.from_seq - 1) AS before_chain,
       (SELECT chain FROM messages WHERE tenant = $1 AND run_id = $2
           AND seq = w.end_seq - 1 AND w.end_seq < c.message_count) AS after_chain,
       (SELECT chain FROM messages WHERE tenant = $1 AND run_id = $2
           AND seq = c.message_count - 1 AND w.end_seq < c.message_count) AS head_chain,
       j.tools_from,
       (SELECT chain FROM (SELECT seq, chain FROM tool_results
                            WHERE tenant = $1 AND run_id = $2 AND seq >= j.tools_from - 1
                              AND $6 <> 0 ORDER BY seq LIMIT 1) AS d
         WHERE d.seq = j.tools_from - 1) AS tools_before,
       (SELECT chain FROM (SELECT seq, chain FROM tool_results
                            WHERE tenant = $1 AND run_id = $2 AND seq >= c.tool_count
                              AND $6 <> 0 ORDER BY seq LIMIT 1) AS d
         WHERE d.seq = c.tool_count) AS tools_covered,
       c.quarantined_at,
       EXISTS (SELECT 1 FROM checkpoints
                WHERE tenant = $1 AND run_id = $2 AND step > c.step) AS has_newer,
       t.arguments_digests
FROM (SELECT * FROM checkpoints WHERE tenant = $1 AND run_id = $2 AND ",
            $($filter)+,
            ") AS c
CROSS JOIN LATERAL (
    SELECT least($4, c.message_count) AS from_seq,
           coalesce((SELECT seq FROM (
                         SELECT seq, sum(octet_length(content)) OVER (ORDER BY seq) AS upto
                         FROM messages
                         WHERE tenant = $1 AND run_id = $2
                           AND seq >= least($4, c.message_count) AND seq < c.message_count
                     ) AS sized
                     WHERE upto > $5 AND seq > least($4, c.message_count)
                     ORDER BY seq LIMIT 1),
                    c.message_count) AS end_seq
) AS w
CROSS JOIN LATERAL (
    SELECT CASE $6::int
               WHEN 0 THEN 1::bigint
               WHEN 1 THEN coalesce(
                   (SELECT min(seq) FROM tool_results
                     WHERE tenant = $1 AND run_id = $2 AND step = c.step),
                   (SELECT coalesce(max(seq), 0) + 1 FROM tool_results
                     WHERE tenant = $1 AND run_id = $2))
               ELSE 9223372036854775807::bigint
           END AS tools_from
    -- Kept a subquery (not flattened into its users), so the digest lookups below compare seq
    -- with a computed value and probe the primary key even before the table has statistics.
    OFFSET 0
) AS j
CROSS JOIN LATERAL (
    SELECT array_agg(role) AS roles, array_agg(content) AS contents
    FROM (SELECT role, content FROM messages
          WHERE tenant = $1 AND run_id = $2 AND seq >= w.from_seq AND seq < w.end_seq
          ORDER BY seq) AS ordered
) AS m
CROSS JOIN LATERAL (
    SELECT array_agg(call_id) AS call_ids, array_agg(tool_name) AS tool_names,
           array_agg(step) AS steps, array_agg(output) AS outputs,
           array_agg(is_error) AS is_errors, array_agg(seq) AS seqs,
           array_agg(recorded_at) AS recorded_ats, array_agg(chain) AS chains,
           array_agg(intent) AS intents, array_agg(arguments_digest) AS arguments_digests
    FROM (SELECT * FROM tool_results
          WHERE tenant = $1 AND run_id = $2 AND seq >= j.tools_from ORDER BY seq) AS ordered
) AS t"
        )
    };
}

/// The checkpoint alone, for runs with no messages and no tool results: without the two
/// aggregating joins, Postgres spends about a third less on it (measured: 35 µs of backend CPU
/// instead of 50 µs at 10 KB). `has_tools` (one index probe) and the checkpoint's
/// `message_count` tell whether that was everything; when it was not, the caller loads with the
/// full statement instead, so the answer still comes from one snapshot.
/// The columns are `snapshot_sql`'s first twelve, then `has_tools`, `label`, `quarantined_at`
/// and `has_newer` (whether a checkpoint lies above this one: a primary-key probe).
macro_rules! bare_checkpoint_sql {
    ($($filter:tt)+) => {
        concat!(
            "SELECT step, id, epoch, content_type, state, metadata_keys, metadata_values,
       message_count, tool_count, checksum, created_at, quarantine_reason,
       EXISTS (SELECT 1 FROM tool_results WHERE tenant = $1 AND run_id = $2) AS has_tools,
       label, quarantined_at,
       EXISTS (SELECT 1 FROM checkpoints AS newer
                WHERE newer.tenant = $1 AND newer.run_id = $2
                  AND newer.step > checkpoints.step) AS has_newer
FROM checkpoints WHERE tenant = $1 AND run_id = $2 AND ",
            $($filter)+
        )
    };
}

/// The newest checkpoint at or below step `$3` that is not quarantined: a backward scan of the
/// primary key that stops at the first valid row.
macro_rules! latest_filter {
    () => {
        "step <= $3 AND quarantine_reason IS NULL ORDER BY step DESC LIMIT 1"
    };
}

pub(super) const LOAD_LATEST: &str = snapshot_sql!(latest_filter!());
pub(super) const LOAD_LATEST_BARE: &str = bare_checkpoint_sql!(latest_filter!());

/// The checkpoint at exactly step `$3`, quarantined or not.
pub(super) const LOAD_AT: &str = snapshot_sql!("step = $3");
pub(super) const LOAD_AT_BARE: &str = bare_checkpoint_sql!("step = $3");

pub(super) const TOOLS: &str = "\
SELECT call_id, tool_name, step, output, is_error, seq, recorded_at, chain, intent,
       arguments_digest
FROM tool_results WHERE tenant = $1 AND run_id = $2 ORDER BY seq";

pub(super) const STEPS: &str = "\
SELECT step FROM checkpoints WHERE tenant = $1 AND run_id = $2 ORDER BY step";

/// One page of summaries, steps strictly between `$3` and `$4`; `octet_length` reads the size
/// from the TOAST pointer, not the value. A filter, when given, goes after the bounds.
macro_rules! list_sql {
    ($order:literal $(, $($filter:tt)+)?) => {
        concat!(
            "SELECT step, octet_length(state), quarantine_reason, created_at, checksum, epoch,
       message_count, label, metadata_keys, metadata_values, id, quarantined_at
FROM checkpoints WHERE tenant = $1 AND run_id = $2 AND step > $3 AND step < $4",
            $($($filter)+,)?
            "
ORDER BY step ",
            $order,
            " LIMIT $5"
        )
    };
}

pub(super) const LIST: &str = list_sql!("ASC");
pub(super) const LIST_DESCENDING: &str = list_sql!("DESC");

/// Keeps only the checkpoints whose metadata holds every pair of the filter: keys `$6` and
/// values `$7`, matched against the stored parallel arrays, so the database filters as it
/// scans and a page is one statement however rarely it matches.
macro_rules! metadata_filter {
    () => {
        "
  AND NOT EXISTS (
      SELECT 1 FROM unnest($6::text[], $7::text[]) AS f(key, value)
       WHERE NOT EXISTS (
           SELECT 1 FROM unnest(metadata_keys, metadata_values) AS m(key, value)
            WHERE m.key = f.key AND m.value = f.value))"
    };
}

pub(super) const LIST_MATCHING: &str = list_sql!("ASC", metadata_filter!());
pub(super) const LIST_MATCHING_DESCENDING: &str = list_sql!("DESC", metadata_filter!());

/// The step carrying a label, through the partial unique index.
pub(super) const LABEL_STEP: &str = "\
SELECT step FROM checkpoints WHERE tenant = $1 AND run_id = $2 AND label = $3";

/// A run's head with its checkpoint figures; `RUN_INFO_ONE` and `RUN_INFO_PAGE*` add the filter.
macro_rules! run_info_sql {
    ($($filter:tt)+) => {
        concat!(
            "SELECT r.run_id, r.epoch, r.message_count, r.tool_count, r.updated_at,
       (SELECT max(step) FROM checkpoints c WHERE c.tenant = r.tenant AND c.run_id = r.run_id),
       (SELECT max(step) FROM checkpoints c WHERE c.tenant = r.tenant AND c.run_id = r.run_id
           AND quarantine_reason IS NULL),
       (SELECT count(*) FROM checkpoints c WHERE c.tenant = r.tenant AND c.run_id = r.run_id)
  FROM runs r WHERE ",
            $($filter)+
        )
    };
}

pub(super) const RUN_INFO_ONE: &str = run_info_sql!("r.tenant = $1 AND r.run_id = $2");

/// A keyset page of a tenant's runs in byte order: `$2` the prefix, `$3` the run id the page
/// starts after, `$4` the limit, `$5` the prefix's upper bound. Every comparison is collated
/// "C", so the range runs on the `runs_by_run_id_bytes` index.
pub(super) const RUN_INFO_PAGE_BOUNDED: &str = run_info_sql!(
    "r.tenant = $1 AND r.run_id COLLATE \"C\" >= $2 AND r.run_id COLLATE \"C\" > $3
   AND r.run_id COLLATE \"C\" < $5 ORDER BY r.run_id COLLATE \"C\" LIMIT $4"
);

/// `RUN_INFO_PAGE_BOUNDED` for a prefix with no upper bound (the empty prefix).
pub(super) const RUN_INFO_PAGE: &str = run_info_sql!(
    "r.tenant = $1 AND r.run_id COLLATE \"C\" >= $2 AND r.run_id COLLATE \"C\" > $3
   ORDER BY r.run_id COLLATE \"C\" LIMIT $4"
);

/// Keeps the first reason and its time (`$5`): an already quarantined row is left alone (and
/// a first quarantine is told: see `mark_quarantined`).
pub(super) const QUARANTINE: &str = "\
UPDATE checkpoints SET quarantine_reason = $4, quarantined_at = $5
WHERE tenant = $1 AND run_id = $2 AND step = $3 AND quarantine_reason IS NULL";

/// Creates the run or bumps its epoch, atomically, and returns the whole head.
pub(super) const BEGIN_RESUME: &str = concat!(
    "INSERT INTO runs AS r (tenant, run_id, epoch, updated_at)
VALUES ($1, $2, 1, statement_timestamp())
ON CONFLICT (tenant, run_id) DO UPDATE SET epoch = r.epoch + 1, ",
    "updated_at = greatest(excluded.updated_at,
                      ((r.updated_at AT TIME ZONE 'UTC') + interval '1 microsecond')
                          AT TIME ZONE 'UTC')",
    "
RETURNING epoch, message_count, message_head, tool_count, tool_head, updated_at"
);

/// Rewind, after `LOCK_RUN`: drop the messages past the restored checkpoint...
pub(super) const TRUNCATE_MESSAGES: &str = "\
DELETE FROM messages WHERE tenant = $1 AND run_id = $2 AND seq >= $3";

/// ...and make the restored chain the head.
pub(super) const SET_MESSAGE_HEAD: &str = concat!(
    "UPDATE runs SET message_count = $3, message_head = $4, ",
    bump_updated_at!(),
    "
WHERE tenant = $1 AND run_id = $2
RETURNING updated_at"
);

/// The highest valid step, read under the run lock to refresh the fast path's cache.
pub(super) const LATEST_STEP: &str = "\
SELECT step FROM checkpoints
WHERE tenant = $1 AND run_id = $2 AND quarantine_reason IS NULL
ORDER BY step DESC LIMIT 1";

pub(super) const RUN_EXISTS: &str = "\
SELECT EXISTS (SELECT 1 FROM runs WHERE tenant = $1 AND run_id = $2)";

/// The cache's freshness check: the run row and the identity of its latest valid checkpoint,
/// by primary key and without payloads, and whether any checkpoint (quarantined) lies above.
pub(super) const LATEST_HEAD: &str = "\
SELECT r.tool_count, r.tool_head, c.step, c.id, c.epoch, c.checksum,
       EXISTS (SELECT 1 FROM checkpoints n
                WHERE n.tenant = r.tenant AND n.run_id = r.run_id
                  AND n.step > coalesce(c.step, -1)) AS has_newer
  FROM runs r
  LEFT JOIN LATERAL (
        SELECT step, id, epoch, checksum FROM checkpoints
         WHERE tenant = r.tenant AND run_id = r.run_id AND quarantine_reason IS NULL
         ORDER BY step DESC LIMIT 1) c ON true
 WHERE r.tenant = $1 AND r.run_id = $2";

/// DeleteRun deletes the run row first: that locks it, so later statements in the transaction
/// see everything a concurrent writer committed before.
pub(super) const DELETE_RUN: &str = "DELETE FROM runs WHERE tenant = $1 AND run_id = $2";
pub(super) const DELETE_CHECKPOINTS: &str =
    "DELETE FROM checkpoints WHERE tenant = $1 AND run_id = $2";
pub(super) const DELETE_MESSAGES: &str = "DELETE FROM messages WHERE tenant = $1 AND run_id = $2";
pub(super) const DELETE_TOOLS: &str = "DELETE FROM tool_results WHERE tenant = $1 AND run_id = $2";
pub(super) const DELETE_PINS: &str =
    "DELETE FROM checkpoint_pins WHERE tenant = $1 AND run_id = $2";

/// DeleteCheckpoints, after `LOCK_RUN`: the listed steps that no source pins...
pub(super) const DELETE_LISTED_CHECKPOINTS: &str = "\
DELETE FROM checkpoints c
 WHERE c.tenant = $1 AND c.run_id = $2 AND c.step = ANY($3)
   AND NOT EXISTS (SELECT 1 FROM checkpoint_pins p
                    WHERE p.tenant = c.tenant AND p.run_id = c.run_id AND p.step = c.step)";

/// ...then which of the listed steps were kept for a pin (read after the delete, so a pin that
/// landed meanwhile is reported rather than missed)...
pub(super) const PINNED_LISTED_STEPS: &str = "\
SELECT c.step FROM checkpoints c
 WHERE c.tenant = $1 AND c.run_id = $2 AND c.step = ANY($3)
   AND EXISTS (SELECT 1 FROM checkpoint_pins p
                WHERE p.tenant = c.tenant AND p.run_id = c.run_id AND p.step = c.step)
 ORDER BY c.step";

/// ...and, when anything went, a new version of the run row, so that a Save's fast path made
/// from an older version (with the old latest step) falls back to the locked path.
pub(super) const BUMP_RUN_VERSION: &str = concat!(
    "UPDATE runs SET ",
    bump_updated_at!(),
    "
WHERE tenant = $1 AND run_id = $2
RETURNING updated_at"
);

/// The step of the checkpoint the filter names when a window of its log from `$4` (clamped to
/// its `message_count`) of at most `$5` content bytes stops short: the condition by which
/// `snapshot_sql` cuts its window, from `octet_length` alone (a TOASTed body is not read).
/// What refuses an older client's oversized answer before anything is read.
macro_rules! window_stops_short_sql {
    ($($filter:tt)+) => {
        concat!(
            "SELECT c.step
FROM (SELECT step, message_count FROM checkpoints WHERE tenant = $1 AND run_id = $2 AND ",
            $($filter)+,
            ") AS c
WHERE EXISTS (
    SELECT 1 FROM (SELECT seq, sum(octet_length(content)) OVER (ORDER BY seq) AS upto
                   FROM messages
                   WHERE tenant = $1 AND run_id = $2
                     AND seq >= least($4, c.message_count) AND seq < c.message_count) AS sized
    WHERE upto > $5 AND seq > least($4, c.message_count))"
        )
    };
}

pub(super) const LATEST_WINDOW_STOPS_SHORT: &str = window_stops_short_sql!(latest_filter!());
pub(super) const WINDOW_AT_STOPS_SHORT: &str = window_stops_short_sql!("step = $3");
