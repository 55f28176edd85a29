-- Every page reads what waits for the person (the rail's mark): the tasks
-- that asked or failed, found without reading every task.
CREATE INDEX tasks_waiting ON tasks (id) WHERE status IN ('needs-answer', 'failed');
