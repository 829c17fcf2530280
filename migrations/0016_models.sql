-- Models as data (issue 27): the model catalog lives here. Built-in models are seeded at every
-- start from the catalog files compiled into the server (engine/core/models/*.yaml; `builtin`,
-- `source_yaml` holds the file); users add their own MaxText model configs (`config`: the
-- MaxText keys as JSON, `source_yaml`: the YAML document when one was posted). Runs refer to a
-- model by name (runs.model), so a model's row can change without touching its runs.
CREATE TABLE models (
  id          text PRIMARY KEY,
  seq         bigserial UNIQUE,
  name        text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  builtin     boolean NOT NULL DEFAULT false,
  config      jsonb NOT NULL,
  source_yaml text,
  created_by  text REFERENCES users(id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Checks a run was submitted without (run spec skip_checks; "force": true means all of them).
ALTER TABLE runs ADD COLUMN skipped_checks text[] NOT NULL DEFAULT '{}';
