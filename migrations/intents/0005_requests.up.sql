-- Requests: what the owner asked, and an append-only journal from which
-- each request's state is read. The request row itself holds only what
-- lookups need: its application, the intent the engineer opened for it,
-- and its mode (the latest mode entry, kept in the same transaction).
CREATE TABLE requests (
    id         INTEGER PRIMARY KEY,
    app_id     TEXT    NOT NULL REFERENCES apps (id),
    intent_id  INTEGER REFERENCES intents (id), -- NULL until the engineer opens the intent
    mode       TEXT    NOT NULL CHECK (mode IN ('autonomous', 'guided')),
    created_at INTEGER NOT NULL
);
CREATE INDEX requests_app ON requests (app_id, id DESC);
-- An intent answers one request.
CREATE UNIQUE INDEX requests_intent ON requests (intent_id) WHERE intent_id IS NOT NULL;

-- The journal of each request: one entry per revision, from 1. Append-only.
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
CREATE TRIGGER request_journal_no_update BEFORE UPDATE ON request_journal
BEGIN SELECT RAISE(ABORT, 'the request journal is append-only'); END;
CREATE TRIGGER request_journal_no_delete BEFORE DELETE ON request_journal
BEGIN SELECT RAISE(ABORT, 'the request journal is append-only'); END;

-- The owner's writes already applied, by operation id, with the revision
-- their entry got and the state they answered: a repeated operation id
-- answers the same and writes nothing.
CREATE TABLE request_ops (
    op_id      TEXT    PRIMARY KEY,
    request_id INTEGER NOT NULL REFERENCES requests (id),
    revision   INTEGER NOT NULL, -- the revision its entry got
    result     TEXT    NOT NULL CHECK (json_valid(result)),
    FOREIGN KEY (request_id, revision) REFERENCES request_journal (request_id, revision)
);
