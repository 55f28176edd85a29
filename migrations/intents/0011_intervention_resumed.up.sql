-- When the owner's Run continued the intent after an applied receipt: Run
-- writes it once on every applied receipt of the intent that has none, in
-- the transaction that starts the run. Status shows it; a submission's
-- retry never does.
ALTER TABLE intervention_applied ADD COLUMN resumed_at INTEGER;

DROP TRIGGER intervention_applied_fixed;
CREATE TRIGGER intervention_applied_fixed BEFORE UPDATE ON intervention_applied
WHEN NEW.ord IS NOT OLD.ord OR NEW.intent_id IS NOT OLD.intent_id OR NEW.applied_at IS NOT OLD.applied_at
  OR NEW.held IS NOT OLD.held OR (OLD.given_run != '' AND NEW.given_run IS NOT OLD.given_run)
  OR (OLD.resumed_at IS NOT NULL AND NEW.resumed_at IS NOT OLD.resumed_at)
BEGIN SELECT RAISE(ABORT, 'an applied intervention cannot change'); END;
