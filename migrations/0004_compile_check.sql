-- Compile-check preflight (issue 9): a run with preflight "compile" waits for a short command
-- run (MaxText.train_compile, or the reference workload's --compile-only) whose compiler memory
-- figure decides whether it may be placed.
ALTER TABLE runs ADD COLUMN preflight_run_id text REFERENCES runs(id) ON DELETE SET NULL;
ALTER TABLE runs ADD COLUMN preflight_state text
  CHECK (preflight_state IN ('pending', 'passed', 'failed'));
ALTER TABLE runs ADD COLUMN compile_check_for text REFERENCES runs(id) ON DELETE CASCADE;
CREATE INDEX runs_preflight_pending_idx ON runs (preflight_state) WHERE preflight_state = 'pending';
