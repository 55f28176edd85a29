-- What waits for the person (the rail's mark on every page, the needs at
-- the top of the Backlog) is counted and listed per status from an index
-- that holds the status, the id and the intent: the count reads no task's
-- row, and the list walks each status from its oldest and stops at the
-- few it shows, however many failures years of stopped intents hold. It
-- replaces tasks_waiting (0009), which held the id alone. Applied again
-- over itself it changes nothing.
CREATE INDEX IF NOT EXISTS tasks_waiting_by_status ON tasks (status, id, intent_id) WHERE status IN ('needs-answer', 'failed');
DROP INDEX IF EXISTS tasks_waiting;
