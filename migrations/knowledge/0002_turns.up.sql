-- The Log view reads the newest events first, filtered by level, by
-- application or by both; each filter walks its own index backwards from
-- the newest id and stops after a page. Without the third, an application's
-- errors would be found by reading every one of its events.
CREATE INDEX events_level ON events (level, id);
CREATE INDEX events_app ON events (app_id, id);
CREATE INDEX events_app_level ON events (app_id, level, id);

-- Texts kept by their SHA-256: the documents each turn was given and the
-- instructions it ran under. A text stored twice is one row. Retention
-- deletes a blob only when it is older than thirty days and nothing refers
-- to it; a blob is never changed.
CREATE TABLE blobs (
    hash       TEXT    PRIMARY KEY,
    text       TEXT    NOT NULL,
    bytes      INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TRIGGER blobs_no_update BEFORE UPDATE ON blobs
BEGIN SELECT RAISE(ABORT, 'blobs are never changed'); END;

-- One row per turn: when, which application and run, the hash of its
-- instructions, the words it was about, and each document exactly as it
-- was delivered ([{ref, title, hash, bytes, cut, delivered}], the text in
-- blobs). Append-only, and never deleted by retention.
CREATE TABLE contexts (
    id                INTEGER PRIMARY KEY,
    at                INTEGER NOT NULL,
    app_id            TEXT,
    run_id            TEXT,
    kind              TEXT    NOT NULL CHECK (kind IN ('chat', 'planning', 'builder', 'advice', 'distill')),
    instructions_hash TEXT    NOT NULL,
    request           TEXT    NOT NULL DEFAULT '',
    documents         TEXT    NOT NULL DEFAULT '[]'
);
CREATE INDEX contexts_app ON contexts (app_id, id);
CREATE INDEX contexts_run ON contexts (run_id);
CREATE TRIGGER contexts_no_update BEFORE UPDATE ON contexts
BEGIN SELECT RAISE(ABORT, 'contexts are append-only'); END;
CREATE TRIGGER contexts_no_delete BEFORE DELETE ON contexts
BEGIN SELECT RAISE(ABORT, 'contexts are append-only'); END;
