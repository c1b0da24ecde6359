-- checkpointd SQLite schema v4: tool intents in the journal, and the repairs operators make to
-- it.

-- An intent journals, before a side-effecting tool runs, that the call is about to happen. It
-- is a journal entry like a result (it takes a `seq` and the tool chain covers it), so it lives
-- in the same table; a call may then hold one intent and one result, never two of either.
-- SQLite cannot drop a UNIQUE constraint, so the table is rebuilt with the new one (nothing
-- references it).
CREATE TABLE tool_journal (
    tenant      TEXT    NOT NULL,
    run_id      TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    call_id     TEXT    NOT NULL,
    tool_name   TEXT    NOT NULL,
    step        INTEGER NOT NULL,
    is_error    INTEGER NOT NULL,
    chain       BLOB    NOT NULL,
    recorded_at INTEGER NOT NULL,
    intent      INTEGER NOT NULL DEFAULT 0,
    output      BLOB    NOT NULL,
    PRIMARY KEY (tenant, run_id, seq),
    UNIQUE (tenant, run_id, call_id, intent),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);
INSERT INTO tool_journal (tenant, run_id, seq, call_id, tool_name, step, is_error, chain,
                          recorded_at, intent, output)
SELECT tenant, run_id, seq, call_id, tool_name, step, is_error, chain, recorded_at, 0, output
FROM tool_results;
DROP TABLE tool_results;
ALTER TABLE tool_journal RENAME TO tool_results;

-- Every repair an operator made to a run's journal (mark a call done, drop a corrupt entry):
-- who, when, what. Deleted with the run.
CREATE TABLE journal_actions (
    tenant   TEXT    NOT NULL,
    run_id   TEXT    NOT NULL,
    seq      INTEGER NOT NULL,
    call_id  TEXT    NOT NULL,
    action   TEXT    NOT NULL,
    actor    TEXT    NOT NULL,
    detail   TEXT    NOT NULL,
    acted_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, run_id, seq)
);
