-- What the links index was derived by and has read: the version of the
-- derivation that wrote it (an older one than the running code's means a
-- full rebuild) and the highest id of each source table it has read, so
-- that the update after an attempt reads only what is new. task_runs is the
-- rowid of task_runs in intents.sqlite. No row: the index was never built
-- by a version that keeps this, and is rebuilt.
CREATE TABLE links_state (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    version   INTEGER NOT NULL,
    task_runs INTEGER NOT NULL DEFAULT 0,
    contexts  INTEGER NOT NULL DEFAULT 0,
    servings  INTEGER NOT NULL DEFAULT 0,
    lessons   INTEGER NOT NULL DEFAULT 0,
    cases     INTEGER NOT NULL DEFAULT 0
);

-- An update replaces the rows of the source rows it read.
CREATE INDEX links_source ON links (source_table, source_id);
