-- Per-host worker identity (issue 13): registration binds one agent to one (cluster, slice,
-- host) slot and issues that agent a credential of its own (stored hashed, rotated at every
-- registration). Every later agent call uses it and may act only for the ranks of its worker.
ALTER TABLE workers ADD COLUMN credential_hash text UNIQUE;
