-- Where each act of the owner came from: the console's pages, the command
-- line (`autoapp intervention submit`) or an MCP client (`autoapp mcp`).
-- The request journal keeps it on the owner's entries and on the run entry
-- (the owner's Run); the inbox on every receipt. '' is an entry written
-- before the launcher kept it, or by the engineer or the host. Both tables
-- stay append-only: a receipt's via is as fixed as the rest of it.
ALTER TABLE request_journal ADD COLUMN via TEXT NOT NULL DEFAULT '' CHECK (via IN ('', 'console', 'cli', 'mcp'));
ALTER TABLE interventions ADD COLUMN via TEXT NOT NULL DEFAULT '' CHECK (via IN ('', 'console', 'cli', 'mcp'));

DROP TRIGGER interventions_receipt_fixed;
CREATE TRIGGER interventions_receipt_fixed BEFORE UPDATE ON interventions
WHEN NEW.ord IS NOT OLD.ord OR NEW.intent_id IS NOT OLD.intent_id OR NEW.request_id IS NOT OLD.request_id
  OR NEW.kind IS NOT OLD.kind OR NEW.text IS NOT OLD.text OR NEW.submitted_at IS NOT OLD.submitted_at
  OR NEW.boundary_pause IS NOT OLD.boundary_pause OR NEW.via IS NOT OLD.via
BEGIN SELECT RAISE(ABORT, 'an intervention receipt cannot change'); END;
