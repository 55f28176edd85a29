DROP INDEX tasks_waiting;
