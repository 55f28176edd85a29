-- The event log: what the server and its turns did. Every row keeps the
-- identity it had when written; a line with no origin keeps NULL.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    level      TEXT    NOT NULL CHECK (level IN ('debug', 'info', 'warn', 'error')),
    message    TEXT    NOT NULL,
    run_id     TEXT,
    call_id    TEXT,
    app_id     TEXT,
    release_id TEXT,
    revision   TEXT,
    attrs      TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX events_at ON events (at);
