-- Plan against actual (engine/core/plan_vs_actual.h, backend/api/plan_check.h): once a run's
-- steps are steady, its measured TFLOP/s/device is set against the planner's expectation, once.
-- `plan_check` holds that decision: {"verdict": "underperforming" | "as_planned", both figures,
-- the ratio, the threshold, the steady steps, "decided_at"}, or {"verdict": "none"} for a run that
-- finished with nothing to compare (no expectation, never steady). Null: not decided yet.
ALTER TABLE runs ADD COLUMN plan_check jsonb;
-- The sweep reads undecided runs newest first; decided runs leave the index.
CREATE INDEX runs_plan_check_due_idx ON runs (seq) WHERE plan_check IS NULL;

-- Run events that are not state changes, which notifications can subscribe to as run.<kind>:
-- `kind` is 'state' for every state change and note (all events so far) or 'underperforming';
-- `detail` carries such an event's figures (null for state changes).
ALTER TABLE run_events ADD COLUMN kind text NOT NULL DEFAULT 'state';
ALTER TABLE run_events ADD COLUMN detail jsonb;
