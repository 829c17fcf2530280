-- Log retention (retention.log_lines_days): when the sweep deleted a finished run's log lines.
-- The sweep skips runs already done; the run, its metrics, attempts and signatures stay.
ALTER TABLE runs ADD COLUMN logs_purged_at timestamptz;
