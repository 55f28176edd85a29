-- Lessons: what a resolved case taught (distilled, provisional until a
-- person confirms it) or what a person wrote (curated, confirmed at once).
-- A lesson's text is never edited in place, so its servings and its case
-- keep pointing at what was actually served: a correction is a new lesson
-- that supersedes the old one. Nothing is deleted; retired and superseded
-- lessons stay for the record and are never served.
--
-- applies_files and applies_routes are JSON arrays of strings; flags is a
-- JSON array of review flags (recurring, instructions_changed, upgraded,
-- superseded), empty when the lesson needs no review. case_id is not a
-- foreign key, as cases.context_id is not. Times are Unix milliseconds.
CREATE TABLE lessons (
    id                INTEGER PRIMARY KEY,
    text              TEXT    NOT NULL CHECK (trim(text) <> ''),
    status            TEXT    NOT NULL CHECK (status IN ('provisional', 'confirmed', 'retired', 'superseded')),
    origin            TEXT    NOT NULL CHECK (origin IN ('distilled', 'curated')),
    case_id           INTEGER,
    applies_stage     TEXT    NOT NULL DEFAULT '',
    applies_files     TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(applies_files) = 'array'),
    applies_routes    TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(applies_routes) = 'array'),
    applies_signature TEXT    NOT NULL DEFAULT '',
    instructions_hash TEXT    NOT NULL DEFAULT '',
    server_version    TEXT    NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    confirmed_at      INTEGER,
    confirmed_by      TEXT,
    retired_at        INTEGER,
    superseded_by     INTEGER REFERENCES lessons (id),
    pinned            INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    flags             TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(flags) = 'array'),
    CHECK (origin = 'curated' OR case_id IS NOT NULL),
    CHECK ((status = 'superseded') = (superseded_by IS NOT NULL)),
    CHECK ((status = 'retired') = (retired_at IS NOT NULL)),
    CHECK ((confirmed_at IS NULL) = (confirmed_by IS NULL))
);
CREATE INDEX lessons_status ON lessons (status, id);
CREATE INDEX lessons_case ON lessons (case_id) WHERE case_id IS NOT NULL;
CREATE INDEX lessons_signature ON lessons (applies_signature) WHERE applies_signature <> '';
CREATE INDEX lessons_pinned ON lessons (pinned, status) WHERE pinned = 1;

-- The files a lesson applies to, one row each, so the related tier finds
-- lessons by file through an index. Written with the lesson, never changed.
CREATE TABLE lesson_files (
    lesson_id INTEGER NOT NULL REFERENCES lessons (id),
    path      TEXT    NOT NULL,
    PRIMARY KEY (path, lesson_id)
) WITHOUT ROWID;

-- Full-text index over a lesson's text and the words of where it applies;
-- rowid is the lesson's id. A lesson's indexed columns never change and it
-- is never deleted, so an insert is the only write it needs.
CREATE VIRTUAL TABLE lessons_fts USING fts5 (text, applies, tokenize = 'unicode61 remove_diacritics 2');

CREATE TRIGGER lessons_index AFTER INSERT ON lessons
BEGIN
    INSERT INTO lessons_fts (rowid, text, applies)
    VALUES (NEW.id, NEW.text,
            NEW.applies_stage || ' ' || NEW.applies_files || ' ' || NEW.applies_routes);
    INSERT OR IGNORE INTO lesson_files (lesson_id, path)
    SELECT NEW.id, value FROM json_each(NEW.applies_files) WHERE type = 'text' AND value <> '';
END;

CREATE TRIGGER lessons_text_immutable BEFORE UPDATE ON lessons
WHEN NEW.id IS NOT OLD.id
  OR NEW.text IS NOT OLD.text
  OR NEW.origin IS NOT OLD.origin
  OR NEW.case_id IS NOT OLD.case_id
  OR NEW.created_at IS NOT OLD.created_at
  OR NEW.applies_stage IS NOT OLD.applies_stage
  OR NEW.applies_files IS NOT OLD.applies_files
  OR NEW.applies_routes IS NOT OLD.applies_routes
  OR NEW.applies_signature IS NOT OLD.applies_signature
BEGIN SELECT RAISE(ABORT, 'a lesson''s text is never edited in place; replace it with a new lesson'); END;

CREATE TRIGGER lessons_end_states BEFORE UPDATE ON lessons
WHEN OLD.status IN ('retired', 'superseded') AND NEW.status IS NOT OLD.status
BEGIN SELECT RAISE(ABORT, 'a retired or superseded lesson stays so'); END;

CREATE TRIGGER lessons_no_delete BEFORE DELETE ON lessons
BEGIN SELECT RAISE(ABORT, 'lessons are never deleted'); END;

CREATE TRIGGER lesson_files_no_update BEFORE UPDATE ON lesson_files
BEGIN SELECT RAISE(ABORT, 'a lesson''s files never change'); END;
CREATE TRIGGER lesson_files_no_delete BEFORE DELETE ON lesson_files
BEGIN SELECT RAISE(ABORT, 'a lesson''s files never change'); END;
