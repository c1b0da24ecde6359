-- checkpointd schema v4 for Postgres: tool intents in the journal, and the repairs operators
-- make to it.

-- An intent journals, before a side-effecting tool runs, that the call is about to happen. It
-- is a journal entry like a result (it takes a `seq` and the tool chain covers it), so it lives
-- in the same table; a call may then hold one intent and one result, never two of either.
-- Adding a column with a constant default rewrites nothing on Postgres 11+.
ALTER TABLE tool_results ADD COLUMN intent boolean NOT NULL DEFAULT false;
ALTER TABLE tool_results DROP CONSTRAINT tool_results_tenant_run_id_call_id_key;
ALTER TABLE tool_results ADD CONSTRAINT tool_results_call_kind UNIQUE (tenant, run_id, call_id, intent);

-- Every repair an operator made to a run's journal (mark a call done, drop a corrupt entry):
-- who, when, what. Deleted with the run.
CREATE TABLE journal_actions (
    tenant   text        NOT NULL,
    run_id   text        NOT NULL,
    seq      bigint      NOT NULL,
    call_id  text        NOT NULL,
    action   text        NOT NULL,
    actor    text        NOT NULL,
    detail   text        NOT NULL,
    acted_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, run_id, seq)
);
