-- checkpointd schema v2 for Postgres: the durable task queue.
--
-- The same columns as the SQLite queue (migrations/sqlite/0002_tasks.sql), in Postgres types:
-- timestamps are timestamptz (whole microseconds, like SQLite's INTEGER micros), delays bigint
-- milliseconds, u32 counters bigint so that every u32 fits, and the approval decision a boolean.
-- `state` is TaskState::as_str, `last_error_class` ErrorClass::as_str. The retry policy is data
-- on the row, so a task keeps the policy it was enqueued with.
--
-- `id` is a UUIDv7 in its lower-case hyphenated text form, which sorts by creation time. It is
-- collated "C" so that `ORDER BY id` and `id > after` compare bytes, as Rust's TaskId does,
-- whatever the database's default collation.
--
-- `approval_requested_at IS NOT NULL` means the task has an approval; `approval_decision` is
-- NULL until decided.
--
-- Claims are one statement (FOR UPDATE SKIP LOCKED + UPDATE ... RETURNING, see queue_sql.rs);
-- every other transition reads the row FOR UPDATE, applies src/queue/rules.rs in Rust and
-- writes it back fenced on the attempt it read. Every time is the caller's, never now().
CREATE TABLE tasks (
    tenant                text             NOT NULL,
    id                    text COLLATE "C" NOT NULL,
    run_id                text             NOT NULL,
    state                 text             NOT NULL,
    attempt               bigint           NOT NULL,
    attempts_used         bigint           NOT NULL,
    initial_delay_ms      bigint           NOT NULL,
    multiplier            double precision NOT NULL,
    max_delay_ms          bigint           NOT NULL,
    jitter                double precision NOT NULL,
    max_attempts          bigint           NOT NULL,
    idempotency_key       text,
    worker_id             text,
    lease_expires_at      timestamptz,
    next_attempt_at       timestamptz      NOT NULL,
    last_error            text,
    last_error_class      text,
    approval_action       text,
    approval_requested_at timestamptz,
    approval_decision     boolean,
    approval_decided_by   text,
    approval_decided_at   timestamptz,
    approval_comment      text,
    created_at            timestamptz      NOT NULL,
    updated_at            timestamptz      NOT NULL,
    approval_details      bytea,
    input                 bytea            NOT NULL,
    result                bytea,
    PRIMARY KEY (tenant, id)
);

-- Enqueue deduplicates on the key within a tenant (ON CONFLICT names this index's columns and
-- predicate); tasks without a key never collide.
CREATE UNIQUE INDEX tasks_idempotency_key
    ON tasks (tenant, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Claims: due pending tasks in the order they became due; ListTasks with a state filter.
CREATE INDEX tasks_due
    ON tasks (tenant, state, next_attempt_at, id);

-- Claims: running tasks whose lease has expired (stale workers to reclaim). Only running tasks
-- hold a lease, and there are few of them next to the backlog.
CREATE INDEX tasks_lease
    ON tasks (tenant, lease_expires_at)
    WHERE state = 'running';

-- Inputs, results and approval details are opaque client bytes, often already compressed: out
-- of line and uncompressed, as the checkpoint payloads in version 1.
ALTER TABLE tasks ALTER COLUMN input SET STORAGE EXTERNAL;
ALTER TABLE tasks ALTER COLUMN result SET STORAGE EXTERNAL;
ALTER TABLE tasks ALTER COLUMN approval_details SET STORAGE EXTERNAL;
