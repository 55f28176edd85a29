CREATE INDEX tasks_waiting ON tasks (id) WHERE status IN ('needs-answer', 'failed');
DROP INDEX tasks_waiting_by_status;
