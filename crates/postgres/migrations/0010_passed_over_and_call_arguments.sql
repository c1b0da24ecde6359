-- checkpointd schema v10 for Postgres: when a checkpoint was quarantined (loads report every
-- quarantined checkpoint they pass over, with since when), and the digest of a journalled
-- call's arguments (a replay is refused when the call being made has other arguments).

-- NULL for checkpoints quarantined before v10, whose time was not recorded.
ALTER TABLE checkpoints ADD COLUMN quarantined_at timestamptz NULL;

-- Lower-case hex SHA-256 of the call's arguments as the client serialized them; '' when the
-- client sent none. Not covered by checksum v1. A constant default rewrites nothing.
ALTER TABLE tool_results ADD COLUMN arguments_digest text NOT NULL DEFAULT '';
