-- checkpointd schema v6 for Postgres: API keys, created by `checkpointd keys create`.
--
-- Only the SHA-256 of a key's secret half is stored; the key itself is shown once, on
-- creation. `tenant` NULL means every tenant (admin keys only). `revoked_at` is NULL while
-- the key works; the server looks keys up per call, so a revocation needs no restart.
CREATE TABLE api_keys (
    id          text COLLATE "C" PRIMARY KEY,
    secret_hash bytea       NOT NULL,
    tenant      text,
    role        text        NOT NULL,
    name        text        NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
