-- A MaxText step line that rebuilds byte for byte from its figures (engine/core/step_line_text.h)
-- is stored once, as its metrics row, instead of as the row and again as log text: the row
-- keeps where the line sat in rank 0's output (log_seq), what the logger printed before
-- "completed step:" (log_prefix), and its place in arrival order (log_id, from the log lines'
-- own sequence so that a live follower orders both kinds of line alike). The log API rebuilds
-- the text. Any other step line keeps its text in log_lines as before (log_seq NULL).
ALTER TABLE metrics ADD COLUMN log_seq bigint, ADD COLUMN log_prefix text, ADD COLUMN log_id bigint;
-- Pages of a run's lines and live followers read rank 0's rebuilt lines in order through this
-- index, beside log_lines_run_order_idx.
CREATE INDEX metrics_log_order_idx ON metrics (run_id, attempt_number, log_seq)
  WHERE log_seq IS NOT NULL;
