-- log_lines carried two indexes no query uses: UNIQUE (id) and (run_id, id). Pages of a run's
-- lines read (run_id, attempt_number, rank, seq), live followers and idempotent uploads read the
-- primary key (attempt_id, rank, seq), retention and run deletion find a run's lines through the
-- former. Each extra index cost every ingested line a B-tree insert and took 6 GB per 100 M
-- lines (docs/benchmarks.md). id stays: the arrival order a live batch is sorted by.
DROP INDEX IF EXISTS log_lines_run_id_idx;
ALTER TABLE log_lines DROP CONSTRAINT IF EXISTS log_lines_id_key;
