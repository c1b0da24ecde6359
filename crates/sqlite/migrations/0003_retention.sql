-- checkpointd SQLite schema, version 3: retention policies and pins.

-- The run's own retention policy in its text form (`keep_last:5`); NULL means the server's
-- default (`--retention`), so changing the default reaches every run that never chose one.
ALTER TABLE runs ADD COLUMN retention TEXT;

-- The pruner under a keep-everything default lists only the runs that chose a policy.
CREATE INDEX runs_with_retention ON runs (tenant, run_id) WHERE retention IS NOT NULL;

-- Pins keep a checkpoint whatever the retention policy says. One row per (step, source): an
-- operator's pin and an approval wait's pin on the same step come and go independently.
-- `source` is `operator` or `approval:TASK_ID`.
CREATE TABLE checkpoint_pins (
    tenant    TEXT    NOT NULL,
    run_id    TEXT    NOT NULL,
    step      INTEGER NOT NULL,
    source    TEXT    NOT NULL,
    pinned_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, run_id, step, source),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);
