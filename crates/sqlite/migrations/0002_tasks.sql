-- checkpointd SQLite schema, version 2: the durable task queue.
--
-- One row per task, keyed by (tenant, id) like every other table. `id` is a UUIDv7 in its
-- lower-case hyphenated text form, which sorts by creation time, so `ORDER BY id` is creation
-- order and pagination is `id > after`.
--
-- Units follow version 1: timestamps are INTEGER unix microseconds, counters INTEGER. The retry
-- policy is data on the row (delays in milliseconds), so a task keeps the policy it was
-- enqueued with. `state` is TaskState::as_str, `last_error_class` ErrorClass::as_str.
--
-- `approval_requested_at IS NOT NULL` means the task has an approval; `approval_decision` is
-- NULL until decided, then 1 (approved) or 0 (rejected).
--
-- The backend reads a row, applies src/queue/rules.rs in Rust and writes the row back, all in
-- one IMMEDIATE transaction; SQLite's single writer makes that atomic. The write-back is
-- still fenced on the attempt it read.
--
-- Large payload columns (approval_details, input, result) come last, as in version 1.
CREATE TABLE tasks (
    tenant                TEXT    NOT NULL,
    id                    TEXT    NOT NULL,
    run_id                TEXT    NOT NULL,
    state                 TEXT    NOT NULL,
    attempt               INTEGER NOT NULL,
    attempts_used         INTEGER NOT NULL,
    initial_delay_ms      INTEGER NOT NULL,
    multiplier            REAL    NOT NULL,
    max_delay_ms          INTEGER NOT NULL,
    jitter                REAL    NOT NULL,
    max_attempts          INTEGER NOT NULL,
    idempotency_key       TEXT,
    worker_id             TEXT,
    lease_expires_at      INTEGER,
    next_attempt_at       INTEGER NOT NULL,
    last_error            TEXT,
    last_error_class      TEXT,
    approval_action       TEXT,
    approval_requested_at INTEGER,
    approval_decision     INTEGER,
    approval_decided_by   TEXT,
    approval_decided_at   INTEGER,
    approval_comment      TEXT,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    approval_details      BLOB,
    input                 BLOB    NOT NULL,
    result                BLOB,
    PRIMARY KEY (tenant, id)
);

-- Enqueue deduplicates on the key within a tenant; tasks without a key never collide.
CREATE UNIQUE INDEX tasks_idempotency_key
    ON tasks (tenant, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Claims: due pending tasks in the order they became due, read straight off the index. `id`
-- breaks ties, so the scan can stop at the batch size without sorting.
CREATE INDEX tasks_due
    ON tasks (tenant, state, next_attempt_at, id);

-- Claims: running tasks whose lease has expired (stale workers to reclaim).
CREATE INDEX tasks_lease
    ON tasks (tenant, state, lease_expires_at)
    WHERE lease_expires_at IS NOT NULL;
