-- Applications: each one a git workspace under <root>/apps/<id>/workspace.
CREATE TABLE apps (
    id                 TEXT    PRIMARY KEY CHECK (id GLOB '[a-z0-9]*' AND id NOT GLOB '*[^a-z0-9-]*' AND length(id) <= 40),
    name               TEXT    NOT NULL,
    origin             TEXT    NOT NULL, -- "template:<name>" or the folder it was registered from
    created_at         INTEGER NOT NULL,
    current_release_id TEXT    REFERENCES releases (id)
);

-- A release is a successful build, recorded with the revision it was built from.
CREATE TABLE releases (
    id         TEXT    PRIMARY KEY,
    app_id     TEXT    NOT NULL REFERENCES apps (id),
    revision   TEXT    NOT NULL,
    built_at   INTEGER NOT NULL
);
CREATE INDEX releases_app ON releases (app_id, built_at);

-- Activations: the owner made a release current. Append-only.
CREATE TABLE activations (
    id         INTEGER PRIMARY KEY,
    app_id     TEXT    NOT NULL REFERENCES apps (id),
    release_id TEXT    NOT NULL REFERENCES releases (id),
    at         INTEGER NOT NULL
);
CREATE TRIGGER activations_no_update BEFORE UPDATE ON activations
BEGIN SELECT RAISE(ABORT, 'activations are append-only'); END;
CREATE TRIGGER activations_no_delete BEFORE DELETE ON activations
BEGIN SELECT RAISE(ABORT, 'activations are append-only'); END;
