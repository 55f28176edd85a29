-- Corpus versions: every change to the lessons a turn can be served (a
-- lesson distilled, written, confirmed, retired, replaced or superseded)
-- writes one version, an increasing number with who made the change, when
-- and what it was, in the transaction of the change. A turn's contexts row
-- and a case name the version they were served from, so a person (and the
-- distiller) can tell whether a lesson existed when a turn met a failure.
-- A lesson names the version it entered the index at and the one it left
-- it at. The lessons kept before versions were counted entered at 0; the
-- turns and cases recorded before name none (NULL). Times are Unix
-- milliseconds.
CREATE TABLE corpus_versions (
    version   INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    actor     TEXT    NOT NULL CHECK (trim(actor) <> ''),
    change    TEXT    NOT NULL CHECK (change IN ('distill', 'write', 'confirm', 'retire', 'replace', 'supersede')),
    lesson_id INTEGER NOT NULL REFERENCES lessons (id),
    summary   TEXT    NOT NULL
);
CREATE TRIGGER corpus_versions_no_update BEFORE UPDATE ON corpus_versions
BEGIN SELECT RAISE(ABORT, 'a corpus version is never changed'); END;
CREATE TRIGGER corpus_versions_no_delete BEFORE DELETE ON corpus_versions
BEGIN SELECT RAISE(ABORT, 'a corpus version is never deleted'); END;

ALTER TABLE lessons ADD COLUMN entered_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lessons ADD COLUMN left_version INTEGER;
UPDATE lessons SET left_version = 0 WHERE status IN ('retired', 'superseded');

ALTER TABLE contexts ADD COLUMN corpus_version INTEGER;
ALTER TABLE cases ADD COLUMN corpus_version INTEGER;

-- A hint's serving names the stage of the failure it stood beside, so that
-- a lesson's count of resolved servings can say how many were hints whose
-- lesson named another stage, or none ("of which unrelated by stage"). ''
-- for a serving that is not a hint, and for the hints served before this.
ALTER TABLE servings ADD COLUMN for_stage TEXT NOT NULL DEFAULT '';
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
  OR NEW.for_stage IS NOT OLD.for_stage
BEGIN SELECT RAISE(ABORT, 'a serving''s opening columns never change'); END;

-- What the distiller is shown of a case, kept as it was: a check case's
-- acceptance example (its steps, as a blob's hash, written when the case
-- opens), and the release the build that resolved it made, or the checks
-- that resolved it ran against.
ALTER TABLE cases ADD COLUMN example_steps TEXT;
ALTER TABLE cases ADD COLUMN resolved_release TEXT;
CREATE TRIGGER cases_evidence_immutable BEFORE UPDATE ON cases
WHEN NEW.example_steps IS NOT OLD.example_steps
  OR NEW.corpus_version IS NOT OLD.corpus_version
  OR (OLD.resolved_at IS NOT NULL AND NEW.resolved_release IS NOT OLD.resolved_release)
BEGIN SELECT RAISE(ABORT, 'a case''s evidence never changes'); END;
-- Retention keeps every blob a case refers to; it reads them through this.
CREATE INDEX cases_example_steps ON cases (example_steps) WHERE example_steps IS NOT NULL;
