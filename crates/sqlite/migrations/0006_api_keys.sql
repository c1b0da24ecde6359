-- checkpointd SQLite schema, version 6: API keys, created by `checkpointd keys create`.
--
-- Only the SHA-256 of a key's secret half is stored; the key itself is shown once, on
-- creation. `tenant` NULL means every tenant (admin keys only). Times are unix microseconds,
-- like every other timestamp column; `revoked_at` is NULL while the key works.
CREATE TABLE api_keys (
    id          TEXT    NOT NULL PRIMARY KEY,
    secret_hash BLOB    NOT NULL,
    tenant      TEXT,
    role        TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
