-- What each run did to its application, one row per thing the host saw it
-- do: an edit that landed (the tool and the files), a build (passed, or the
-- stage that failed and its problems), a run of the checks (how many
-- examples passed). The Turns view lists them beside the turn's documents,
-- by the turn's run id. Written by the host as it hears of each, never
-- changed and never deleted, like the contexts they belong to.
CREATE TABLE run_work (
    id      INTEGER PRIMARY KEY,
    run_id  TEXT    NOT NULL CHECK (run_id <> ''),
    app_id  TEXT    NOT NULL CHECK (app_id <> ''),
    at      INTEGER NOT NULL,
    kind    TEXT    NOT NULL CHECK (kind IN ('edit', 'build', 'checks')),
    ok      INTEGER NOT NULL CHECK (ok IN (0, 1)),
    summary TEXT    NOT NULL
);
-- The Turns view reads a page of turns' work by run, kind by kind.
CREATE INDEX run_work_run ON run_work (run_id, kind, id);
CREATE TRIGGER run_work_no_update BEFORE UPDATE ON run_work
BEGIN SELECT RAISE(ABORT, 'a run''s work is never changed'); END;
CREATE TRIGGER run_work_no_delete BEFORE DELETE ON run_work
BEGIN SELECT RAISE(ABORT, 'a run''s work is never deleted'); END;

-- The cases a turn opened and resolved, found by its run id.
CREATE INDEX cases_opened_run ON cases (opened_run_id);
CREATE INDEX cases_resolved_run ON cases (resolved_run_id) WHERE resolved_run_id IS NOT NULL;

-- A turn's contexts row is written as its documents are delivered, before
-- the model is asked anything, so that the cases its tools open name it;
-- the same turn recorded again when it ends answers the same row. The key
-- is the hash of what the row records of the turn (run, kind,
-- instructions, request, documents); NULL for a row with no run and for
-- rows written before it existed.
ALTER TABLE contexts ADD COLUMN turn_key TEXT;
CREATE UNIQUE INDEX contexts_turn_key ON contexts (turn_key) WHERE turn_key IS NOT NULL;

-- The lesson a newer one supersedes: set when it is written (a person's
-- replacement, or the distiller's answer that a case has the same cause as
-- an existing lesson), never changed. The old lesson becomes superseded
-- when it was provisional; a confirmed one keeps its status and is flagged
-- for review, so only this column says what superseded it.
ALTER TABLE lessons ADD COLUMN supersedes INTEGER REFERENCES lessons (id);
CREATE INDEX lessons_supersedes ON lessons (supersedes) WHERE supersedes IS NOT NULL;
CREATE TRIGGER lessons_supersedes_immutable BEFORE UPDATE ON lessons
WHEN NEW.supersedes IS NOT OLD.supersedes
BEGIN SELECT RAISE(ABORT, 'what a lesson supersedes never changes'); END;
