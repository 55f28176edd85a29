DROP TRIGGER lessons_supersedes_immutable;
DROP INDEX lessons_supersedes;
ALTER TABLE lessons DROP COLUMN supersedes;
DROP INDEX contexts_turn_key;
ALTER TABLE contexts DROP COLUMN turn_key;
DROP INDEX cases_resolved_run;
DROP INDEX cases_opened_run;
DROP TABLE run_work;
