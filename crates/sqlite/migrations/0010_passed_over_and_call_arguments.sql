-- checkpointd SQLite schema v10: when a checkpoint was quarantined (loads report every
-- quarantined checkpoint they pass over, with since when), and the digest of a journalled
-- call's arguments (a replay is refused when the call being made has other arguments).

-- Unix microseconds, as every other time here; NULL for checkpoints quarantined before v10.
ALTER TABLE checkpoints ADD COLUMN quarantined_at INTEGER NULL;

-- Lower-case hex SHA-256 of the call's arguments as the client serialized them; '' when the
-- client sent none. Not covered by checksum v1.
ALTER TABLE tool_results ADD COLUMN arguments_digest TEXT NOT NULL DEFAULT '';
