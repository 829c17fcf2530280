-- Summaries of settled runs (backend/api/run_summary_store.h), stored so that GET /compare of
-- finished runs reads one row per run instead of every metrics row of each. `fingerprint` is
-- the one summary_of() computes from the run, cluster and attempt rows' xmin; a stored summary
-- whose fingerprint no longer matches is never served, it is computed again.
CREATE TABLE run_summaries (
  run_id      text PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  fingerprint text NOT NULL,
  summary     jsonb NOT NULL,
  computed_at timestamptz NOT NULL DEFAULT now()
);
-- The precompute sweep looks for recently finished runs.
CREATE INDEX runs_finished_idx ON runs (finished_at) WHERE finished_at IS NOT NULL;
