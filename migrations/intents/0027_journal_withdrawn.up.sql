-- The request journal takes 'withdrawn': the owner withdrew the intent that
-- answered the request, which stays with its history. SQLite cannot change
-- a CHECK in place, so the table is made again with every entry, copied
-- out first: the operations that point at its entries find them again in
-- the table made under the same name, checked when the migration commits.
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE journal_copy AS SELECT id, request_id, revision, kind, actor, at, body FROM request_journal;
DROP TABLE request_journal;
CREATE TABLE request_journal (
    id         INTEGER PRIMARY KEY,
    request_id INTEGER NOT NULL REFERENCES requests (id),
    revision   INTEGER NOT NULL CHECK (revision >= 1),
    kind       TEXT    NOT NULL CHECK (kind IN ('request', 'message', 'answer', 'question', 'plan',
                                                'approval', 'mode', 'run', 'delivery', 'withdrawn')),
    actor      TEXT    NOT NULL CHECK (actor IN ('owner', 'engineer', 'host')),
    at         INTEGER NOT NULL,
    body       TEXT    NOT NULL CHECK (json_valid(body)),
    UNIQUE (request_id, revision)
);
INSERT INTO request_journal (id, request_id, revision, kind, actor, at, body)
    SELECT id, request_id, revision, kind, actor, at, body FROM journal_copy;
DROP TABLE journal_copy;
CREATE TRIGGER request_journal_no_update BEFORE UPDATE ON request_journal
BEGIN SELECT RAISE(ABORT, 'the request journal is append-only'); END;
CREATE TRIGGER request_journal_no_delete BEFORE DELETE ON request_journal
BEGIN SELECT RAISE(ABORT, 'the request journal is append-only'); END;
