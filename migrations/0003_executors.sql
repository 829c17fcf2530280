-- External executors (issue 10): a cluster's runs go to Podium's agents, a Slurm cluster or
-- Kubernetes (JobSet + Kueue). engine/core/executor.h validates the JSON.
ALTER TABLE clusters ADD COLUMN executor jsonb NOT NULL DEFAULT '{"kind":"agent"}'::jsonb;

-- An attempt of an external-executor cluster is one engine job (a Slurm job id, a JobSet name).
-- Its ranks have no worker row: each joins through `podium-worker attach` with the attempt's
-- token (stored hashed; it is valid only for this attempt and only until it finishes).
ALTER TABLE attempts ADD COLUMN executor text NOT NULL DEFAULT 'agent'
  CHECK (executor IN ('agent', 'slurm', 'kubernetes'));
ALTER TABLE attempts ADD COLUMN engine_job_id text;
ALTER TABLE attempts ADD COLUMN engine_state text;
-- The engine's verdict once its job ended: {"engine_state","failure_class","exit_code","reason"}.
-- An external attempt is finished only after it is known, so a rank's SIGTERM from a failing
-- node is read as the node's loss, not as a preemption.
ALTER TABLE attempts ADD COLUMN engine_end jsonb;
ALTER TABLE attempts ADD COLUMN engine_submitted_at timestamptz;
ALTER TABLE attempts ADD COLUMN engine_cancel_sent_at timestamptz;
ALTER TABLE attempts ADD COLUMN engine_manifest text;
ALTER TABLE attempts ADD COLUMN attach_token_hash text UNIQUE;
ALTER TABLE attempt_hosts ADD COLUMN hostname text NOT NULL DEFAULT '';
ALTER TABLE attempt_hosts ADD COLUMN joined_at timestamptz;
CREATE INDEX attempts_external_open_idx ON attempts (executor) WHERE finished_at IS NULL
  AND executor <> 'agent';
