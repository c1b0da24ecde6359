-- checkpointd SQLite schema, version 8: the tool journal by step.
--
-- A load with JOURNAL_SCOPE_STEP reads the journal from the first entry of the checkpoint's
-- step on, and verifies it from the chain digest stored before that entry instead of from seq 1:
-- this index finds that first entry with one probe, so the load costs what it returns.
CREATE INDEX tool_results_by_step ON tool_results (tenant, run_id, step, seq);
