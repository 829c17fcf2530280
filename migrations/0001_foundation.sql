-- Foundation schema: accounts, clusters, datasets, runs, checkpoints, audit.
-- Every listed table has a bigserial `seq`: lists page on it (keyset), so a cursor is exact and
-- stable under concurrent inserts, unlike OFFSET or timestamps.

CREATE TABLE settings (
  key   text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE users (
  id            text PRIMARY KEY,
  seq           bigserial UNIQUE,
  username      text NOT NULL UNIQUE,
  role          text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
  password_hash text,
  disabled      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
  id           text PRIMARY KEY,
  seq          bigserial UNIQUE,
  user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name         text NOT NULL DEFAULT '',
  token_hash   text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);

CREATE TABLE sessions (
  id_hash    text PRIMARY KEY,
  user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

CREATE TABLE clusters (
  id                  text PRIMARY KEY,
  seq                 bigserial UNIQUE,
  name                text NOT NULL UNIQUE,
  accelerator         text NOT NULL,
  num_slices          integer NOT NULL CHECK (num_slices >= 1),
  capacity            text NOT NULL,
  zone                text NOT NULL DEFAULT '',
  price_per_chip_hour double precision,
  labels              jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_by          text REFERENCES users(id) ON DELETE SET NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE worker_tokens (
  id           text PRIMARY KEY,
  seq          bigserial UNIQUE,
  cluster_id   text NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
  token_hash   text NOT NULL UNIQUE,
  created_by   text REFERENCES users(id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);

CREATE TABLE workers (
  id                text PRIMARY KEY,
  seq               bigserial UNIQUE,
  cluster_id        text NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
  slice             integer NOT NULL,
  host              integer NOT NULL,
  hostname          text NOT NULL DEFAULT '',
  address           text NOT NULL DEFAULT '',
  devices           integer NOT NULL DEFAULT 0,
  version           text NOT NULL DEFAULT '',
  registered_at     timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (cluster_id, slice, host)
);

CREATE TABLE datasets (
  id                text PRIMARY KEY,
  seq               bigserial UNIQUE,
  name              text NOT NULL UNIQUE,
  uri               text NOT NULL,
  format            text NOT NULL CHECK (format IN ('jsonl', 'text', 'arrayrecord', 'tfrecord', 'synthetic')),
  records           bigint,
  bytes             bigint,
  tokens            bigint,
  tokens_per_record double precision,
  created_by        text REFERENCES users(id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE runs (
  id                text PRIMARY KEY,
  seq               bigserial UNIQUE,
  name              text NOT NULL,
  owner_id          text REFERENCES users(id) ON DELETE SET NULL,
  cluster_id        text NOT NULL REFERENCES clusters(id) ON DELETE RESTRICT,
  dataset_id        text REFERENCES datasets(id) ON DELETE RESTRICT,
  model             text NOT NULL DEFAULT '',
  workload          text NOT NULL,
  spec              jsonb NOT NULL,
  plan              jsonb,
  forced            boolean NOT NULL DEFAULT false,
  state             text NOT NULL CHECK (state IN ('queued', 'starting', 'running', 'recovering',
                                                   'cancelling', 'succeeded', 'failed', 'cancelled')),
  failure_class     text,
  restarts          integer NOT NULL DEFAULT 0,
  recoveries        integer NOT NULL DEFAULT 0,
  last_step         bigint,
  resumed_from_step bigint,
  priority          text NOT NULL DEFAULT 'medium',
  tags              text[] NOT NULL DEFAULT '{}',
  created_at        timestamptz NOT NULL DEFAULT now(),
  started_at        timestamptz,
  finished_at       timestamptz,
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX runs_state_idx ON runs (state, seq);
CREATE INDEX runs_cluster_idx ON runs (cluster_id, seq);
CREATE INDEX runs_owner_idx ON runs (owner_id, seq);

-- Every state change of a run, with its cause: the audit trail of the state machine.
CREATE TABLE run_events (
  id         bigserial PRIMARY KEY,
  run_id     text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  at         timestamptz NOT NULL DEFAULT now(),
  from_state text,
  to_state   text NOT NULL,
  cause      text NOT NULL DEFAULT ''
);
CREATE INDEX run_events_run_idx ON run_events (run_id, id);

CREATE TABLE checkpoints (
  id         text PRIMARY KEY,
  seq        bigserial UNIQUE,
  run_id     text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  attempt_id text,
  step       bigint NOT NULL,
  uri        text NOT NULL,
  bytes      bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (run_id, step)
);

CREATE TABLE audit_log (
  id            bigserial PRIMARY KEY,
  at            timestamptz NOT NULL DEFAULT now(),
  actor         text NOT NULL,
  action        text NOT NULL,
  resource_type text NOT NULL,
  resource_id   text NOT NULL,
  detail        jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_resource_idx ON audit_log (resource_type, resource_id);
