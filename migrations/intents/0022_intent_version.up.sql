-- version counts the changes to an intent and its tasks, so a read of
-- either can be answered from the last one while nothing changed: the
-- running intent's page asks every two seconds. Every task's change
-- passes through its row (moveTask writes the task and its event in one
-- transaction), so the triggers on the two tables see every change.
ALTER TABLE intents ADD COLUMN version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER intents_version AFTER UPDATE ON intents
WHEN NEW.version = OLD.version
BEGIN UPDATE intents SET version = version + 1 WHERE id = NEW.id; END;

CREATE TRIGGER tasks_version_insert AFTER INSERT ON tasks
BEGIN UPDATE intents SET version = version + 1 WHERE id = NEW.intent_id; END;

CREATE TRIGGER tasks_version_update AFTER UPDATE ON tasks
BEGIN UPDATE intents SET version = version + 1 WHERE id = NEW.intent_id; END;

CREATE TRIGGER tasks_version_delete AFTER DELETE ON tasks
BEGIN UPDATE intents SET version = version + 1 WHERE id = OLD.intent_id; END;
