-- checkpointd Postgres schema, version 7: checkpoint labels and the run listing.
--
-- A label is a client-chosen name of a checkpoint, unique within its run (LangGraph keeps its
-- own checkpoint ids this way). NULL means none; the partial unique index both enforces the
-- uniqueness and answers "which step carries this label" for LoadAtStep by label.
ALTER TABLE checkpoints ADD COLUMN label text NULL;
CREATE UNIQUE INDEX checkpoints_label ON checkpoints (tenant, run_id, label)
    WHERE label IS NOT NULL;

-- ListRuns pages a tenant's runs in byte order of run_id and filters by prefix with a range
-- (run_id >= prefix AND run_id < the prefix's successor). Byte order is what the other backends
-- and the page tokens use, whatever the database's default collation, so the range needs an
-- index collated "C"; the primary key keeps the default collation.
CREATE INDEX runs_by_run_id_bytes ON runs (tenant, run_id COLLATE "C");
