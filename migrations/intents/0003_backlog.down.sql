DROP TABLE operations;
DROP TABLE task_runs;
DROP TABLE intent_events;
DROP TABLE task_events;
DROP TABLE tasks;
DROP TABLE intents;
