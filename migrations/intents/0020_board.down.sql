DROP INDEX tasks_completed;
DROP INDEX intents_live;
