-- An intent's version (0022) counts the changes to its interventions too:
-- its page reads the receipts with the intent, and answers both from the
-- last read while nothing changed. Receipts are never deleted (0008), so
-- inserts and updates are every change. (An interventions row only ever
-- takes its done_at, which the page does not show; it is counted anyway,
-- so that no change to a receipt can be missed.)
CREATE TRIGGER interventions_version_insert AFTER INSERT ON interventions
BEGIN UPDATE intents SET version = version + 1 WHERE id = NEW.intent_id; END;

CREATE TRIGGER interventions_version_update AFTER UPDATE ON interventions
BEGIN UPDATE intents SET version = version + 1 WHERE id = NEW.intent_id; END;

CREATE TRIGGER intervention_applied_version_insert AFTER INSERT ON intervention_applied
BEGIN UPDATE intents SET version = version + 1 WHERE id = NEW.intent_id; END;

CREATE TRIGGER intervention_applied_version_update AFTER UPDATE ON intervention_applied
BEGIN UPDATE intents SET version = version + 1 WHERE id = NEW.intent_id; END;
