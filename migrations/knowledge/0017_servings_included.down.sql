DROP TRIGGER servings_opening_immutable;
CREATE TRIGGER servings_opening_immutable BEFORE UPDATE ON servings
WHEN NEW.id IS NOT OLD.id
  OR NEW.lesson_id IS NOT OLD.lesson_id
  OR NEW.run_id IS NOT OLD.run_id
  OR NEW.context_id IS NOT OLD.context_id
  OR NEW.served_at IS NOT OLD.served_at
  OR NEW.reason IS NOT OLD.reason
  OR NEW.related_file IS NOT OLD.related_file
BEGIN SELECT RAISE(ABORT, 'a serving''s opening columns never change'); END;

DROP INDEX servings_open;
CREATE INDEX servings_open ON servings (run_id) WHERE outcome IS NULL;

ALTER TABLE servings DROP COLUMN included;
