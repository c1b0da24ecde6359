-- checkpointd SQLite schema, version 5: whether a human's decision resumes its task by itself.
--
-- 1: Approve or Reject makes the task pending (claimable) at once. 0: the decision is recorded
-- and the task stays parked in input_required, unclaimable, until an operator's ResumeTask.
-- Resolved at Enqueue (the request's value, else the server's `--auto-resume-hitl`) and never
-- changed afterwards. Tasks enqueued before this version keep the behaviour they were enqueued
-- under: 1.
ALTER TABLE tasks ADD COLUMN auto_resume_hitl INTEGER NOT NULL DEFAULT 1;
