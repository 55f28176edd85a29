-- backlog_version counts every change to the tables the Backlog and the
-- Overview read from this store (the applications, intents, tasks and
-- their events and runs, the interventions and the usage rows), whoever
-- makes it: this server, or a command run beside it. While it stays the
-- same, a read of those tables answers what the last one did, so a page
-- asked every two seconds costs one row however long the history; any
-- change, committed in the same transaction as its trigger, makes the
-- next read read again. It only grows. Applied again over itself it
-- changes nothing.
CREATE TABLE IF NOT EXISTS backlog_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT OR IGNORE INTO backlog_version (id, version) VALUES (1, 0);

CREATE TRIGGER IF NOT EXISTS backlog_version_apps_insert AFTER INSERT ON apps
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_apps_update AFTER UPDATE ON apps
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_apps_delete AFTER DELETE ON apps
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_intents_insert AFTER INSERT ON intents
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_intents_update AFTER UPDATE ON intents
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_intents_delete AFTER DELETE ON intents
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_tasks_insert AFTER INSERT ON tasks
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_tasks_update AFTER UPDATE ON tasks
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_tasks_delete AFTER DELETE ON tasks
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_task_events_insert AFTER INSERT ON task_events
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_task_events_update AFTER UPDATE ON task_events
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_task_events_delete AFTER DELETE ON task_events
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_task_runs_insert AFTER INSERT ON task_runs
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_task_runs_update AFTER UPDATE ON task_runs
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_task_runs_delete AFTER DELETE ON task_runs
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_interventions_insert AFTER INSERT ON interventions
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_interventions_update AFTER UPDATE ON interventions
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_interventions_delete AFTER DELETE ON interventions
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_intervention_applied_insert AFTER INSERT ON intervention_applied
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_intervention_applied_update AFTER UPDATE ON intervention_applied
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_intervention_applied_delete AFTER DELETE ON intervention_applied
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_usage_insert AFTER INSERT ON usage
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_usage_update AFTER UPDATE ON usage
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER IF NOT EXISTS backlog_version_usage_delete AFTER DELETE ON usage
BEGIN UPDATE backlog_version SET version = version + 1 WHERE id = 1; END;
