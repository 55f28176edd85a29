-- A serving says whether its lesson reached the model: included = 1 when
-- its whole line did, 0 when the turn was going to give it and the budget
-- cut it. Every lesson a turn was going to give is recorded once its
-- documents are delivered; one not included is never scored, so its
-- outcome stays NULL (the CHECK) and no build, check or end of a turn
-- closes it. The rows written before this were all delivered whole.
ALTER TABLE servings ADD COLUMN included INTEGER NOT NULL DEFAULT 1
    CHECK (included IN (0, 1) AND (included = 1 OR outcome IS NULL));

-- Only a serving that reached the model is waiting for its outcome.
DROP INDEX servings_open;
CREATE INDEX servings_open ON servings (run_id) WHERE outcome IS NULL AND included = 1;

-- included is an opening column: it never changes.
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
