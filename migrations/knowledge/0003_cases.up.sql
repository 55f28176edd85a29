-- Cases: a build or check failure the host saw, from the build or run that
-- met it to the one that found it gone. A case is evidence for the
-- distiller and for the person, so the triggers below keep what was
-- observed from changing: the opening columns never, the edits only by an
-- append while the case is open, the resolution never once written, the
-- diagnosis once. The distillation bookkeeping stays writable.
--
-- A build case's signature is the stage plus its normalised message,
-- hashed (executor/build.Signature); a check case's is "check:" plus the
-- example's content hash. context_id names the contexts row of the turn
-- that met the failure; it is not a foreign key so that this table keeps
-- no dependency on how contexts are kept. Times are Unix milliseconds.
CREATE TABLE cases (
    id                INTEGER PRIMARY KEY,
    kind              TEXT    NOT NULL CHECK (kind IN ('build', 'check')),
    signature         TEXT    NOT NULL CHECK (signature <> ''),
    app_id            TEXT    NOT NULL CHECK (app_id <> ''),
    stage             TEXT,
    example_id        TEXT,
    example_hash      TEXT,
    message           TEXT    NOT NULL,
    request           TEXT    NOT NULL DEFAULT '',
    context_id        INTEGER,
    revision_before   TEXT    NOT NULL DEFAULT '',
    release_before    TEXT    NOT NULL DEFAULT '',
    model             TEXT    NOT NULL DEFAULT '',
    server_version    TEXT    NOT NULL DEFAULT '',
    opened_at         INTEGER NOT NULL,
    opened_run_id     TEXT    NOT NULL,
    edits             TEXT    NOT NULL DEFAULT '' CHECK (length(edits) <= 20000),
    resolved_at       INTEGER,
    resolved_run_id   TEXT,
    resolved_revision TEXT,
    diagnosis         TEXT,
    distill_state     TEXT    CHECK (distill_state IN ('queued', 'asked', 'done', 'failed')),
    distill_tries     INTEGER NOT NULL DEFAULT 0 CHECK (distill_tries >= 0),
    CHECK ((kind = 'build' AND stage IS NOT NULL AND example_id IS NULL AND example_hash IS NULL)
        OR (kind = 'check' AND stage IS NULL AND example_id IS NOT NULL AND example_hash IS NOT NULL)),
    -- A resolution is written whole.
    CHECK ((resolved_at IS NULL AND resolved_run_id IS NULL AND resolved_revision IS NULL)
        OR (resolved_at IS NOT NULL AND resolved_run_id IS NOT NULL AND resolved_revision IS NOT NULL))
);
-- At most one open case per failure of an application.
CREATE UNIQUE INDEX cases_one_open ON cases (app_id, kind, signature) WHERE resolved_at IS NULL;
CREATE INDEX cases_app ON cases (app_id, id);
CREATE INDEX cases_to_distill ON cases (id) WHERE resolved_at IS NOT NULL AND distill_state IS NULL;

CREATE TRIGGER cases_opening_immutable BEFORE UPDATE ON cases
WHEN NEW.id IS NOT OLD.id
  OR NEW.kind IS NOT OLD.kind
  OR NEW.signature IS NOT OLD.signature
  OR NEW.app_id IS NOT OLD.app_id
  OR NEW.stage IS NOT OLD.stage
  OR NEW.example_id IS NOT OLD.example_id
  OR NEW.example_hash IS NOT OLD.example_hash
  OR NEW.message IS NOT OLD.message
  OR NEW.request IS NOT OLD.request
  OR NEW.context_id IS NOT OLD.context_id
  OR NEW.revision_before IS NOT OLD.revision_before
  OR NEW.release_before IS NOT OLD.release_before
  OR NEW.model IS NOT OLD.model
  OR NEW.server_version IS NOT OLD.server_version
  OR NEW.opened_at IS NOT OLD.opened_at
  OR NEW.opened_run_id IS NOT OLD.opened_run_id
BEGIN SELECT RAISE(ABORT, 'a case''s opening columns never change'); END;

CREATE TRIGGER cases_edits_closed BEFORE UPDATE ON cases
WHEN NEW.edits IS NOT OLD.edits AND OLD.resolved_at IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a resolved case''s edits never change'); END;

CREATE TRIGGER cases_edits_append_only BEFORE UPDATE ON cases
WHEN NEW.edits IS NOT OLD.edits AND substr(NEW.edits, 1, length(OLD.edits)) IS NOT OLD.edits
BEGIN SELECT RAISE(ABORT, 'a case''s edits are only appended to'); END;

CREATE TRIGGER cases_resolution_immutable BEFORE UPDATE ON cases
WHEN OLD.resolved_at IS NOT NULL
 AND (NEW.resolved_at IS NOT OLD.resolved_at
   OR NEW.resolved_run_id IS NOT OLD.resolved_run_id
   OR NEW.resolved_revision IS NOT OLD.resolved_revision)
BEGIN SELECT RAISE(ABORT, 'a case''s resolution never changes once written'); END;

CREATE TRIGGER cases_diagnosis_once BEFORE UPDATE ON cases
WHEN OLD.diagnosis IS NOT NULL AND NEW.diagnosis IS NOT OLD.diagnosis
BEGIN SELECT RAISE(ABORT, 'a case''s diagnosis is written once'); END;

CREATE TRIGGER cases_no_delete BEFORE DELETE ON cases
BEGIN SELECT RAISE(ABORT, 'cases are never deleted'); END;
