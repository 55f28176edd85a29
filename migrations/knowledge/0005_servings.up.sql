-- Servings: a lesson given to a turn, and what came of it. A serving is
-- written only after the turn reported what it delivered (a lesson the
-- budget dropped was never read and is never served), and it is closed
-- once: by the first build or check of its run that could say something
-- about it, or as none when the turn ended without one. An outcome is a
-- fact about one attempt; nothing here promotes, retires or ranks a lesson.
--
-- reason is why the lesson was given (pinned, related, words, hint);
-- related_file is the file a related serving shares with the turn.
-- context_id names the contexts row of the turn; like cases.context_id it
-- is not a foreign key. Times are Unix milliseconds.
CREATE TABLE servings (
    id            INTEGER PRIMARY KEY,
    lesson_id     INTEGER NOT NULL REFERENCES lessons (id),
    run_id        TEXT    NOT NULL CHECK (run_id <> ''),
    context_id    INTEGER,
    served_at     INTEGER NOT NULL,
    reason        TEXT    NOT NULL CHECK (reason IN ('pinned', 'related', 'words', 'hint')),
    related_file  TEXT    NOT NULL DEFAULT '',
    outcome       TEXT    CHECK (outcome IN ('resolved', 'recurred', 'blocked', 'inconclusive', 'unrelated', 'none')),
    closed_at     INTEGER,
    closed_by_run TEXT,
    -- A closing is written whole.
    CHECK ((outcome IS NULL AND closed_at IS NULL AND closed_by_run IS NULL)
        OR (outcome IS NOT NULL AND closed_at IS NOT NULL AND closed_by_run IS NOT NULL))
);
CREATE INDEX servings_lesson ON servings (lesson_id, id);
CREATE INDEX servings_run ON servings (run_id);
CREATE INDEX servings_open ON servings (run_id) WHERE outcome IS NULL;

CREATE TRIGGER servings_opening_immutable BEFORE UPDATE ON servings
WHEN NEW.id IS NOT OLD.id
  OR NEW.lesson_id IS NOT OLD.lesson_id
  OR NEW.run_id IS NOT OLD.run_id
  OR NEW.context_id IS NOT OLD.context_id
  OR NEW.served_at IS NOT OLD.served_at
  OR NEW.reason IS NOT OLD.reason
  OR NEW.related_file IS NOT OLD.related_file
BEGIN SELECT RAISE(ABORT, 'a serving''s opening columns never change'); END;

CREATE TRIGGER servings_closed_once BEFORE UPDATE ON servings
WHEN OLD.outcome IS NOT NULL
 AND (NEW.outcome IS NOT OLD.outcome
   OR NEW.closed_at IS NOT OLD.closed_at
   OR NEW.closed_by_run IS NOT OLD.closed_by_run)
BEGIN SELECT RAISE(ABORT, 'a serving is closed once'); END;

CREATE TRIGGER servings_no_delete BEFORE DELETE ON servings
BEGIN SELECT RAISE(ABORT, 'servings are never deleted'); END;
