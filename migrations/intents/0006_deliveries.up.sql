-- A delivery: what the host handed over when an intent was done, recorded
-- once per intent. artifacts is [{path, size, sha256, media}], each a
-- regular file committed at revision; problems is [{path, message}] for
-- each artifact path that could not be exported; evidence is {tasks:
-- [{slug, exampleHashes}], checks: [{id, hash, passed}]}. Append-only.
CREATE TABLE deliveries (
    intent_id  INTEGER PRIMARY KEY REFERENCES intents (id),
    app_id     TEXT    NOT NULL REFERENCES apps (id),
    at         INTEGER NOT NULL,
    revision   TEXT    NOT NULL CHECK (length(revision) IN (40, 64) AND revision NOT GLOB '*[^0-9a-f]*'),
    release_id TEXT    REFERENCES releases (id),
    evidence   TEXT    NOT NULL CHECK (json_type(evidence) = 'object'),
    artifacts  TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(artifacts) = 'array'),
    problems   TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(problems) = 'array'),
    -- The delivery's application is its intent's.
    FOREIGN KEY (intent_id, app_id) REFERENCES intents (id, app_id)
);
CREATE TRIGGER deliveries_no_update BEFORE UPDATE ON deliveries
BEGIN SELECT RAISE(ABORT, 'deliveries are append-only'); END;
CREATE TRIGGER deliveries_no_delete BEFORE DELETE ON deliveries
BEGIN SELECT RAISE(ABORT, 'deliveries are append-only'); END;
