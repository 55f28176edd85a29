-- The relationship index: which recorded things touched which (a task ran
-- as a run, a run and its task edited a file, a task planned a file, a case
-- was opened and resolved in runs and edited files in its window, a lesson
-- came from a case and was served to a run, a run had a turn). Every row
-- names the row it was read from (source_table, source_id) and carries no
-- weight. It is derived: knowledge.RebuildLinks deletes and re-inserts every
-- row in one transaction, so dropping the table loses nothing.
--
-- A file is (app_id, path), the path relative to the workspace; two
-- applications' files of the same name never join. app_id is '' when the
-- source row names no application.
CREATE TABLE links (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind <> ''),
    from_kind    TEXT NOT NULL CHECK (from_kind <> ''),
    from_id      TEXT NOT NULL CHECK (from_id <> ''),
    to_kind      TEXT NOT NULL CHECK (to_kind <> ''),
    to_id        TEXT NOT NULL CHECK (to_id <> ''),
    app_id       TEXT NOT NULL DEFAULT '',
    source_table TEXT NOT NULL CHECK (source_table <> ''),
    source_id    TEXT NOT NULL CHECK (source_id <> ''),
    UNIQUE (kind, from_kind, from_id, to_kind, to_id, app_id, source_table, source_id)
);
CREATE INDEX links_app ON links (app_id, id);
CREATE INDEX links_from ON links (from_kind, from_id);
CREATE INDEX links_to ON links (to_kind, to_id);
