-- checkpointd SQLite schema, version 1.
--
-- Every table is keyed by (tenant, run_id, ...) so that no query can read across tenants.
-- Counters and steps are INTEGER (u64 values that never exceed i64::MAX); digests are raw
-- 32-byte BLOBs; timestamps are INTEGER unix microseconds.
--
-- Large payload columns (state, content, output) come last in each table: SQLite reads a row's
-- columns in order, so anything after a big BLOB would need its overflow pages walked even when
-- only the small columns are wanted (the Save path reads id/epoch/checksum of existing rows).
--
-- No CHECK constraints on payload shapes (e.g. length(checksum) = 32): a damaged value must be
-- readable so the engine can detect it by checksum, quarantine it and fall back, rather than
-- the row being unreadable.

-- One row per run: the write-side head that Save and RecordToolResult extend, and the fencing
-- epoch that Resume bumps.
CREATE TABLE runs (
    tenant        TEXT    NOT NULL,
    run_id        TEXT    NOT NULL,
    epoch         INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    message_head  BLOB    NOT NULL,
    tool_count    INTEGER NOT NULL,
    tool_head     BLOB    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (tenant, run_id)
);

-- One row per saved step. `metadata` is the length-prefixed encoding documented in
-- src/store/sqlite/codec.rs; `checksum` is checksum v1 as 32 raw bytes.
CREATE TABLE checkpoints (
    tenant            TEXT    NOT NULL,
    run_id            TEXT    NOT NULL,
    step              INTEGER NOT NULL,
    id                TEXT    NOT NULL,
    epoch             INTEGER NOT NULL,
    content_type      TEXT    NOT NULL,
    metadata          BLOB    NOT NULL,
    message_count     INTEGER NOT NULL,
    tool_count        INTEGER NOT NULL,
    checksum          BLOB    NOT NULL,
    created_at        INTEGER NOT NULL,
    quarantine_reason TEXT,
    state             BLOB    NOT NULL,
    PRIMARY KEY (tenant, run_id, step),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);

-- "Latest restorable step" is asked on every Save and every load; this partial index answers
-- it with one descending probe instead of stepping over quarantined rows.
CREATE INDEX checkpoints_restorable
    ON checkpoints (tenant, run_id, step)
    WHERE quarantine_reason IS NULL;

-- The run's message log, 0-based. `chain` is the message chain value after this message, so a
-- Save at an earlier offset can find its prefix digest without rehashing the log.
CREATE TABLE messages (
    tenant  TEXT    NOT NULL,
    run_id  TEXT    NOT NULL,
    seq     INTEGER NOT NULL,
    role    TEXT    NOT NULL,
    chain   BLOB    NOT NULL,
    content BLOB    NOT NULL,
    PRIMARY KEY (tenant, run_id, seq),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);

-- The run's tool journal, 1-based, with the tool chain value after each record.
CREATE TABLE tool_results (
    tenant      TEXT    NOT NULL,
    run_id      TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    call_id     TEXT    NOT NULL,
    tool_name   TEXT    NOT NULL,
    step        INTEGER NOT NULL,
    is_error    INTEGER NOT NULL,
    chain       BLOB    NOT NULL,
    recorded_at INTEGER NOT NULL,
    output      BLOB    NOT NULL,
    PRIMARY KEY (tenant, run_id, seq),
    UNIQUE (tenant, run_id, call_id),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);
