-- checkpointd schema v1 for Postgres.
--
-- Tables are created unqualified, in the connection's search_path, so one database can hold
-- several independent checkpointd schemas (the tests use one schema per test).
--
-- Every primary key starts with (tenant, run_id): each query is an index lookup inside one
-- tenant's run and never reads across tenants.
--
-- There are no foreign keys on purpose: every write already locks or conditionally updates the
-- run row, so a key check per inserted row would only add work to the save path, and
-- DeleteRun removes a run's rows from every table in one transaction.

-- One row per run: the fencing epoch and the heads of the message and tool chains.
-- updated_at doubles as the row's version: every write sets it to a value strictly greater than
-- the previous one, which is what the store's optimistic fast path compares against.
CREATE TABLE runs (
    tenant        text        NOT NULL,
    run_id        text        NOT NULL,
    epoch         bigint      NOT NULL DEFAULT 0,
    message_count bigint      NOT NULL DEFAULT 0,
    message_head  bytea       NOT NULL DEFAULT decode(repeat('00', 32), 'hex'),
    tool_count    bigint      NOT NULL DEFAULT 0,
    tool_head     bytea       NOT NULL DEFAULT decode(repeat('00', 32), 'hex'),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, run_id)
)
-- Every Save and RecordToolResult updates its run row, never an indexed column: free space on
-- each page keeps those updates HOT (no index writes, pruned in place).
WITH (fillfactor = 70);

-- One row per saved checkpoint. Metadata is two parallel arrays (keys ascending) rather than
-- jsonb: it is only ever read back whole, and text[] needs no JSON encoding on the hot path.
-- A corrupt checkpoint stays in place with quarantine_reason set, so it can be inspected.
CREATE TABLE checkpoints (
    tenant            text        NOT NULL,
    run_id            text        NOT NULL,
    step              bigint      NOT NULL,
    id                text        NOT NULL,
    epoch             bigint      NOT NULL,
    content_type      text        NOT NULL,
    state             bytea       NOT NULL,
    metadata_keys     text[]      NOT NULL,
    metadata_values   text[]      NOT NULL,
    message_count     bigint      NOT NULL,
    tool_count        bigint      NOT NULL,
    checksum          bytea       NOT NULL,
    created_at        timestamptz NOT NULL,
    quarantine_reason text        NULL,
    PRIMARY KEY (tenant, run_id, step)
);

-- The message log, append-only; chain is the message chain's value after this message, so a
-- Save at any offset finds its prefix digest with one primary-key lookup.
CREATE TABLE messages (
    tenant  text   NOT NULL,
    run_id  text   NOT NULL,
    seq     bigint NOT NULL,
    role    text   NOT NULL,
    content bytea  NOT NULL,
    chain   bytea  NOT NULL,
    PRIMARY KEY (tenant, run_id, seq)
);

-- The tool journal; seq counts from 1, and call_id is unique within a run so a retried
-- RecordToolResult finds the stored result.
CREATE TABLE tool_results (
    tenant      text        NOT NULL,
    run_id      text        NOT NULL,
    seq         bigint      NOT NULL,
    call_id     text        NOT NULL,
    tool_name   text        NOT NULL,
    step        bigint      NOT NULL,
    output      bytea       NOT NULL,
    is_error    boolean     NOT NULL,
    chain       bytea       NOT NULL,
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, run_id, seq),
    UNIQUE (tenant, run_id, call_id)
);

-- Large values are stored out of line and uncompressed (STORAGE EXTERNAL) instead of the default
-- pglz-compressed EXTENDED:
--   * on the benchmark machine pglz made a 100 KB bytea insert about 3x slower than no
--     compression, and Save latency is the number this service is judged by;
--   * agent state is often already compressed or encrypted by the client, where pglz burns CPU
--     for nothing;
--   * lz4 would be cheaper than pglz, but it exists only when the server was built with it, and
--     this migration must run on every supported server;
--   * reads stay cheap: octet_length() (ListCheckpoints' size) reads the TOAST pointer without
--     fetching the value.
-- The price is disk space for compressible payloads, which is the cheaper resource here.
ALTER TABLE checkpoints ALTER COLUMN state SET STORAGE EXTERNAL;
ALTER TABLE messages ALTER COLUMN content SET STORAGE EXTERNAL;
ALTER TABLE tool_results ALTER COLUMN output SET STORAGE EXTERNAL;
