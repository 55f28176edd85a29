-- The workspace revision before a task's first turn, stamped once by the
-- move that first starts it: every run of the task is judged from it, so
-- an attempt that only builds what an earlier one edited counts.
ALTER TABLE tasks ADD COLUMN rev_before TEXT NOT NULL DEFAULT '';
