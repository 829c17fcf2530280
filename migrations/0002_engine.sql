-- Engine schema: attempts and their hosts, log lines, per-step metrics, log facts and signatures.

-- A worker agent process is identified by a random instance string it draws at start: a register
-- with another instance means the previous agent process is gone (its ranks are lost).
ALTER TABLE workers ADD COLUMN instance text NOT NULL DEFAULT '';

-- Elastic runs: the slice count the run runs on now (null until placed) and why it changed.
ALTER TABLE runs ADD COLUMN current_slices integer;
ALTER TABLE runs ADD COLUMN grow_requested boolean NOT NULL DEFAULT false;
-- Why a queued or recovering run is not placed yet ("waiting_for_capacity: needs 2 free slices,
-- 1 free"), as the scheduler last saw it; null once placed.
ALTER TABLE runs ADD COLUMN waiting_reason text;
-- A finished run built from an imported log (POST /runs/import) ran on no cluster Podium knows:
-- it carries its accelerator and slice count itself.
ALTER TABLE runs ADD COLUMN imported boolean NOT NULL DEFAULT false;
ALTER TABLE runs ALTER COLUMN cluster_id DROP NOT NULL;
ALTER TABLE runs ADD COLUMN accelerator text;
ALTER TABLE runs ADD COLUMN num_slices integer;
ALTER TABLE runs ADD COLUMN log_facts jsonb NOT NULL DEFAULT '{}'::jsonb;

CREATE TABLE attempts (
  id                text PRIMARY KEY,
  seq               bigserial UNIQUE,
  run_id            text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  number            integer NOT NULL,
  state             text NOT NULL CHECK (state IN ('pending', 'starting', 'running', 'succeeded',
                                                   'failed', 'cancelled')),
  -- Why this attempt exists: first, restart (budget spent), recovery (no budget), grow (elastic).
  reason            text NOT NULL DEFAULT 'first',
  num_slices        integer NOT NULL,
  world_size        integer NOT NULL,
  slices            integer[] NOT NULL,
  coordinator_address text NOT NULL DEFAULT '',
  coordinator_port  integer NOT NULL,
  -- Set when the attempt is being torn down (a rank failed, a host was lost, a cancel, a grow):
  -- the remaining ranks are cancelled and the attempt is finished when every rank has ended.
  ending_cause      text,
  user_cancelled    boolean NOT NULL DEFAULT false,
  failure_class     text,
  classification    jsonb,
  restart_decision  jsonb,
  resumed_from_step bigint,
  first_step        bigint,
  last_step         bigint,
  created_at        timestamptz NOT NULL DEFAULT now(),
  running_at        timestamptz,
  ending_at         timestamptz,
  finished_at       timestamptz,
  UNIQUE (run_id, number)
);
CREATE INDEX attempts_live_idx ON attempts (state) WHERE state IN ('pending', 'starting', 'running');

CREATE TABLE attempt_hosts (
  attempt_id        text NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
  rank              integer NOT NULL,
  worker_id         text REFERENCES workers(id) ON DELETE SET NULL,
  slice             integer NOT NULL,
  host              integer NOT NULL,
  gang_slice        integer NOT NULL,
  address           text NOT NULL DEFAULT '',
  command           jsonb NOT NULL,
  env               jsonb NOT NULL,
  workdir           text NOT NULL DEFAULT '',
  checkpoint_dir    text,
  -- pending -> delivered -> running -> exited | lost; a rank never started can end as cancelled.
  state             text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'delivered', 'running', 'exited', 'lost', 'cancelled')),
  pid               integer,
  exit_code         integer,
  signal            integer,
  delivered_at      timestamptz,
  started_at        timestamptz,
  ended_at          timestamptz,
  cancel_requested_at timestamptz,
  cancel_delivered_at timestamptz,
  PRIMARY KEY (attempt_id, rank)
);
CREATE INDEX attempt_hosts_worker_idx ON attempt_hosts (worker_id) WHERE ended_at IS NULL;

-- One row per line a rank printed. (attempt, rank, seq) is the idempotency key of uploads; id
-- is the arrival order that live followers (SSE) resume from.
CREATE TABLE log_lines (
  id         bigserial UNIQUE,
  run_id     text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  attempt_id text NOT NULL,
  attempt_number integer NOT NULL,
  rank       integer NOT NULL,
  seq        bigint NOT NULL,
  ts         timestamptz NOT NULL DEFAULT now(),
  line       text NOT NULL,
  PRIMARY KEY (attempt_id, rank, seq)
);
CREATE INDEX log_lines_run_order_idx ON log_lines (run_id, attempt_number, rank, seq);
CREATE INDEX log_lines_run_id_idx ON log_lines (run_id, id);

-- One row per step execution of rank 0 (a step redone after a restart has a row per attempt).
CREATE TABLE metrics (
  run_id         text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  attempt_id     text NOT NULL,
  attempt_number integer NOT NULL,
  step           bigint NOT NULL,
  at             timestamptz NOT NULL DEFAULT now(),
  step_seconds   double precision,
  tflops_per_device double precision,
  tokens_per_second_per_device double precision,
  total_weights  double precision,
  loss           double precision,
  extra          jsonb NOT NULL DEFAULT '{}'::jsonb,
  rampup         boolean NOT NULL DEFAULT false,
  PRIMARY KEY (attempt_id, step)
);
CREATE INDEX metrics_run_step_idx ON metrics (run_id, step, attempt_number);

-- Failure and warning signatures seen in a rank's output (first excerpt kept).
CREATE TABLE attempt_signatures (
  attempt_id text NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
  rank       integer NOT NULL,
  signature  text NOT NULL,
  count      bigint NOT NULL DEFAULT 1,
  excerpt    text NOT NULL DEFAULT '',
  first_seen timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (attempt_id, rank, signature)
);

ALTER TABLE checkpoints ADD COLUMN attempt_number integer;
