DROP TRIGGER interventions_receipt_fixed;
CREATE TRIGGER interventions_receipt_fixed BEFORE UPDATE ON interventions
WHEN NEW.ord IS NOT OLD.ord OR NEW.intent_id IS NOT OLD.intent_id OR NEW.request_id IS NOT OLD.request_id
  OR NEW.kind IS NOT OLD.kind OR NEW.text IS NOT OLD.text OR NEW.submitted_at IS NOT OLD.submitted_at
  OR NEW.boundary_pause IS NOT OLD.boundary_pause
BEGIN SELECT RAISE(ABORT, 'an intervention receipt cannot change'); END;
ALTER TABLE interventions DROP COLUMN via;
ALTER TABLE request_journal DROP COLUMN via;
