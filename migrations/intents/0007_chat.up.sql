-- The chat turns of each application: the person's message as typed, how
-- the engineer's turn went, its reply, and one line per tool call. A turn
-- belongs to a request when the request journal names one (request_id is
-- that journal's id; no foreign key, as the requests table is its own).
CREATE TABLE chat_turns (
    id         INTEGER PRIMARY KEY,
    app_id     TEXT    NOT NULL REFERENCES apps (id),
    request_id INTEGER,
    run_id     TEXT    NOT NULL UNIQUE,
    message    TEXT    NOT NULL, -- the person's, byte-exact
    status     TEXT    NOT NULL DEFAULT 'running'
                       CHECK (status IN ('running', 'answered', 'failed', 'stopped')),
    reply      TEXT    NOT NULL DEFAULT '', -- the engineer's final text
    lines      TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(lines) = 'array'), -- one per tool call
    sentence   TEXT    NOT NULL DEFAULT '', -- how it ended, when it did not answer
    started_at INTEGER NOT NULL,
    ended_at   INTEGER
);
CREATE INDEX chat_turns_app ON chat_turns (app_id, id);
-- An application has at most one turn running.
CREATE UNIQUE INDEX chat_turns_one_running ON chat_turns (app_id) WHERE status = 'running';
