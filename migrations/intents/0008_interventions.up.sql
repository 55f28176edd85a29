-- Interventions: what the person asks a running intent to do at its next
-- safe boundary (feedback, or a pause). A submission writes one receipt in
-- the inbox and nothing else. The executor applies pending receipts at a
-- boundary: it writes intervention_applied and the effect on the intent in
-- one transaction, and only then acknowledges the receipts (done_at), so a
-- crash between the two never applies a receipt twice.
CREATE TABLE interventions (
    ord            INTEGER PRIMARY KEY,          -- the monotonic order of acceptance
    intent_id      INTEGER NOT NULL REFERENCES intents (id),
    request_id     TEXT    NOT NULL CHECK (length(request_id) BETWEEN 1 AND 200),
    kind           TEXT    NOT NULL CHECK (kind IN ('feedback', 'pause')),
    text           TEXT    NOT NULL,             -- byte for byte as sent
    submitted_at   INTEGER NOT NULL,
    boundary_pause INTEGER NOT NULL CHECK (boundary_pause IN (0, 1)),
    done_at        INTEGER,                      -- acknowledged by the executor; written once
    UNIQUE (intent_id, request_id)
);
CREATE INDEX interventions_pending ON interventions (intent_id, ord) WHERE done_at IS NULL;

CREATE TRIGGER interventions_no_delete BEFORE DELETE ON interventions
BEGIN SELECT RAISE(ABORT, 'intervention receipts are append-only'); END;
CREATE TRIGGER interventions_receipt_fixed BEFORE UPDATE ON interventions
WHEN NEW.ord IS NOT OLD.ord OR NEW.intent_id IS NOT OLD.intent_id OR NEW.request_id IS NOT OLD.request_id
  OR NEW.kind IS NOT OLD.kind OR NEW.text IS NOT OLD.text OR NEW.submitted_at IS NOT OLD.submitted_at
  OR NEW.boundary_pause IS NOT OLD.boundary_pause
BEGIN SELECT RAISE(ABORT, 'an intervention receipt cannot change'); END;
CREATE TRIGGER interventions_ack_once BEFORE UPDATE OF done_at ON interventions
WHEN OLD.done_at IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'an intervention is acknowledged once'); END;

-- Each receipt applied to its intent: when, and the stop it found and kept
-- (held), if the intent was stopped already for another reason. Feedback
-- is given to the next chat turn about the application (given_run, written
-- once).
CREATE TABLE intervention_applied (
    ord        INTEGER PRIMARY KEY REFERENCES interventions (ord),
    intent_id  INTEGER NOT NULL REFERENCES intents (id),
    applied_at INTEGER NOT NULL,
    held       TEXT    NOT NULL DEFAULT '',
    given_run  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX intervention_applied_intent ON intervention_applied (intent_id, ord);

CREATE TRIGGER intervention_applied_no_delete BEFORE DELETE ON intervention_applied
BEGIN SELECT RAISE(ABORT, 'applied interventions are append-only'); END;
CREATE TRIGGER intervention_applied_fixed BEFORE UPDATE ON intervention_applied
WHEN NEW.ord IS NOT OLD.ord OR NEW.intent_id IS NOT OLD.intent_id OR NEW.applied_at IS NOT OLD.applied_at
  OR NEW.held IS NOT OLD.held OR OLD.given_run != ''
BEGIN SELECT RAISE(ABORT, 'an applied intervention cannot change'); END;
