DROP TRIGGER intervention_applied_fixed;
CREATE TRIGGER intervention_applied_fixed BEFORE UPDATE ON intervention_applied
WHEN NEW.ord IS NOT OLD.ord OR NEW.intent_id IS NOT OLD.intent_id OR NEW.applied_at IS NOT OLD.applied_at
  OR NEW.held IS NOT OLD.held OR OLD.given_run != ''
BEGIN SELECT RAISE(ABORT, 'an applied intervention cannot change'); END;
ALTER TABLE intervention_applied DROP COLUMN resumed_at;
