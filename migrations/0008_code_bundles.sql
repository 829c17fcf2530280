-- Code bundles (issue 14): a run's code packed by `podium runs submit --code DIR`, named by the
-- SHA-256 of its bytes and kept in the database with the rest of the team's history. The bytes
-- are split into 1 MiB chunks so that no statement moves more than that at a time.
CREATE TABLE code_bundles (
  digest             text PRIMARY KEY CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
  size_bytes         bigint NOT NULL CHECK (size_bytes > 0),
  files              bigint NOT NULL,
  uncompressed_bytes bigint NOT NULL,
  chunks             int NOT NULL,
  created_by         text REFERENCES users(id) ON DELETE SET NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE code_bundle_chunks (
  digest text NOT NULL REFERENCES code_bundles(digest) ON DELETE CASCADE,
  seq    int NOT NULL,
  bytes  bytea NOT NULL,
  PRIMARY KEY (digest, seq)
);

-- The run's bundle (also in its spec): a bundle a run names cannot be deleted.
ALTER TABLE runs ADD COLUMN code_bundle text REFERENCES code_bundles(digest);
CREATE INDEX runs_code_bundle_idx ON runs (code_bundle) WHERE code_bundle IS NOT NULL;
