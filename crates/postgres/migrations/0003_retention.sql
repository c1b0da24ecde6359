-- checkpointd schema v3 for Postgres: retention policies and pins.

-- The run's own retention policy in its text form (`keep_last:5`); NULL means the server's
-- default (`--retention`), so changing the default reaches every run that never chose one.
-- Adding a nullable column with no default rewrites nothing, so this is instant on a big table.
ALTER TABLE runs ADD COLUMN retention text NULL;

-- The pruner under a keep-everything default lists only the runs that chose a policy.
-- Saves never write `retention`, `tenant` or `run_id`, so their run-row updates stay HOT.
CREATE INDEX runs_with_retention ON runs (tenant, run_id) WHERE retention IS NOT NULL;

-- Pins keep a checkpoint whatever the retention policy says. One row per (step, source): an
-- operator's pin and an approval wait's pin on the same step come and go independently.
-- `source` is `operator` or `approval:TASK_ID`.
CREATE TABLE checkpoint_pins (
    tenant    text        NOT NULL,
    run_id    text        NOT NULL,
    step      bigint      NOT NULL,
    source    text        NOT NULL,
    pinned_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, run_id, step, source)
);
