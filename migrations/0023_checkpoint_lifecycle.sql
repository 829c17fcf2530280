-- Checkpoint lifecycle (issue 30.4): retention per cluster (the run spec's own
-- checkpoint_retention replaces it) and the record of each deletion.
--
-- A checkpoint row is a finished checkpoint ('complete') until retention chooses it: the server
-- marks it 'deleting' (delete_requested_at) and tells the agent that reported it; the agent
-- deletes it on its host (a local directory, or gs:// with the host's own gcloud/gsutil) and
-- reports back: 'deleted' with deleted_at, or 'delete_failed' with delete_error. Rows are kept
-- (the run's history shows what existed and what became of it); steps never reuse a row.
ALTER TABLE clusters ADD COLUMN checkpoint_retention jsonb;

ALTER TABLE checkpoints
  ADD COLUMN state text NOT NULL DEFAULT 'complete'
    CHECK (state IN ('complete', 'deleting', 'deleted', 'delete_failed')),
  ADD COLUMN delete_requested_at timestamptz,
  ADD COLUMN deleted_at timestamptz,
  ADD COLUMN delete_error text;
