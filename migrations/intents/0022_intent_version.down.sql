DROP TRIGGER tasks_version_delete;
DROP TRIGGER tasks_version_update;
DROP TRIGGER tasks_version_insert;
DROP TRIGGER intents_version;
ALTER TABLE intents DROP COLUMN version;
