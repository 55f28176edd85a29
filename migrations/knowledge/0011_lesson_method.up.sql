-- A method_unclear answer of the distiller is kept as a lesson: its text
-- says what about the way of working was unclear (the explanation when the
-- answer gave no sentence of its own). A person reads it on the Knowledge
-- page and can retire it; it is never served to a turn, neither for its
-- words, nor by file, nor pinned, nor as a hint, and the engineer's
-- knowledge.show refuses it. Set when the lesson is written, never changed.
ALTER TABLE lessons ADD COLUMN method_unclear INTEGER NOT NULL DEFAULT 0 CHECK (method_unclear IN (0, 1));
CREATE INDEX lessons_method_unclear ON lessons (id) WHERE method_unclear = 1;
CREATE TRIGGER lessons_method_unclear_immutable BEFORE UPDATE ON lessons
WHEN NEW.method_unclear IS NOT OLD.method_unclear
BEGIN SELECT RAISE(ABORT, 'whether a lesson says the way of working was unclear never changes'); END;

-- Who retired a lesson, as confirmed_by says who confirmed it; NULL for a
-- lesson retired before this was kept. Written with retired_at, once.
ALTER TABLE lessons ADD COLUMN retired_by TEXT;
CREATE TRIGGER lessons_retired_by_once BEFORE UPDATE ON lessons
WHEN OLD.retired_at IS NOT NULL AND NEW.retired_by IS NOT OLD.retired_by
BEGIN SELECT RAISE(ABORT, 'who retired a lesson never changes'); END;
