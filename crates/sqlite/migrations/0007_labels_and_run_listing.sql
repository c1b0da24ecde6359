-- checkpointd SQLite schema, version 7: checkpoint labels.
--
-- A label is a client-chosen name of a checkpoint, unique within its run. NULL means none; the
-- partial unique index both enforces the uniqueness and answers "which step carries this label"
-- for LoadAtStep by label. ListRuns needs no index of its own: the runs primary key is already
-- in byte order (BINARY collation), which is the order ListRuns pages in.
ALTER TABLE checkpoints ADD COLUMN label TEXT;
CREATE UNIQUE INDEX checkpoints_label ON checkpoints (tenant, run_id, label)
    WHERE label IS NOT NULL;
