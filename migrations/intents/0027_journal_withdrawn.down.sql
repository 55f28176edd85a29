PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE journal_copy AS SELECT id, request_id, revision, kind, actor, at, body FROM request_journal WHERE kind <> 'withdrawn';
DROP TABLE request_journal;
CREATE TABLE request_journal (
    id         INTEGER PRIMARY KEY,
    request_id INTEGER NOT NULL REFERENCES requests (id),
    revision   INTEGER NOT NULL CHECK (revision >= 1),
    kind       TEXT    NOT NULL CHECK (kind IN ('request', 'message', 'answer', 'question', 'plan',
                                                'approval', 'mode', 'run', 'delivery')),
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
