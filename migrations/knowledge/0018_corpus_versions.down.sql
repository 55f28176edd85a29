DROP INDEX cases_example_steps;
DROP TRIGGER cases_evidence_immutable;
ALTER TABLE cases DROP COLUMN resolved_release;
ALTER TABLE cases DROP COLUMN example_steps;
DROP TRIGGER servings_opening_immutable;
CREATE TRIGGER servings_opening_immutable BEFORE UPDATE ON servings
WHEN NEW.id IS NOT OLD.id
  OR NEW.lesson_id IS NOT OLD.lesson_id
  OR NEW.run_id IS NOT OLD.run_id
  OR NEW.context_id IS NOT OLD.context_id
  OR NEW.served_at IS NOT OLD.served_at
  OR NEW.reason IS NOT OLD.reason
  OR NEW.related_file IS NOT OLD.related_file
  OR NEW.included IS NOT OLD.included
BEGIN SELECT RAISE(ABORT, 'a serving''s opening columns never change'); END;
ALTER TABLE servings DROP COLUMN for_stage;
ALTER TABLE cases DROP COLUMN corpus_version;
ALTER TABLE contexts DROP COLUMN corpus_version;
ALTER TABLE lessons DROP COLUMN left_version;
ALTER TABLE lessons DROP COLUMN entered_version;
DROP TABLE corpus_versions;
