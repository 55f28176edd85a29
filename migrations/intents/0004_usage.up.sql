-- What each turn used: one row when the turn ends. A turn cut short writes
-- what its completed steps used and is partial; a turn whose provider never
-- reported anything writes zeros, also partial.
CREATE TABLE usage (
    id            INTEGER PRIMARY KEY,
    at            INTEGER NOT NULL,
    kind          TEXT    NOT NULL CHECK (kind IN ('chat', 'planning', 'builder', 'advice', 'distill')),
    run_id        TEXT    NOT NULL DEFAULT '',
    app_id        TEXT    NOT NULL DEFAULT '',
    model         TEXT    NOT NULL,
    input_tokens  INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0),
    partial       INTEGER NOT NULL CHECK (partial IN (0, 1))
);
CREATE INDEX usage_at ON usage (at);
CREATE INDEX usage_run ON usage (run_id);
