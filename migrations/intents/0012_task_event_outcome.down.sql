ALTER TABLE task_events DROP COLUMN outcome;
