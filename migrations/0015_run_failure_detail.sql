-- Why a failed run failed, in one line: the classification's reason of its last attempt (for a
-- code_error the exception line of the traceback, "ModuleNotFoundError: No module named 'x'").
-- Null for runs that did not fail and for runs that failed before this column existed.
ALTER TABLE runs ADD COLUMN failure_detail text;
