-- Curation (issue 30.3): a run's notes and project, projects as named groups of runs, saved
-- compare views, and the indexes behind the runs list's project/dataset/accelerator/date filters.

-- A named group of runs with a description. Runs refer to a project by name (runs.project), so
-- a rename follows through ON UPDATE CASCADE; a project that still holds runs cannot be deleted
-- (the API answers 409 naming the count; move or clear the runs' project first).
CREATE TABLE projects (
  id          text PRIMARY KEY,
  seq         bigserial UNIQUE,
  name        text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  created_by  text REFERENCES users(id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Free text a team keeps about a run (markdown in the dashboard), and the run's project. Both
-- start from the spec's "notes" and "project" at submission and change with PATCH /runs/{id}.
ALTER TABLE runs ADD COLUMN notes text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN project text REFERENCES projects(name) ON UPDATE CASCADE
  ON DELETE RESTRICT;

-- The runs list pages by seq (newest first) under each filter.
CREATE INDEX runs_project_idx ON runs (project, seq) WHERE project IS NOT NULL;
CREATE INDEX runs_dataset_idx ON runs (dataset_id, seq) WHERE dataset_id IS NOT NULL;
-- Imported runs carry their own accelerator; others take their cluster's (runs_cluster_idx).
CREATE INDEX runs_accelerator_idx ON runs (accelerator, seq) WHERE accelerator IS NOT NULL;
CREATE INDEX runs_created_at_idx ON runs (created_at);

-- A saved compare view: a named set of runs with its baseline, under a stable id
-- (GET /api/v1/compares/{id}, dashboard /compare/{id}). Runs are kept by id as given; a run
-- deleted later leaves the view (the compare answers 404 for it).
CREATE TABLE compares (
  id         text PRIMARY KEY,
  seq        bigserial UNIQUE,
  name       text NOT NULL,
  runs       text[] NOT NULL,
  baseline   text NOT NULL,
  created_by text REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (cardinality(runs) >= 2 AND baseline = ANY (runs))
);
