-- The backlog: intents (a request analysed), their tasks, and the history of
-- both. Statuses change only through moveTask and moveIntent, each in one
-- transaction with its event row.
CREATE TABLE intents (
    id           INTEGER PRIMARY KEY,
    app_id       TEXT    NOT NULL REFERENCES apps (id),
    status       TEXT    NOT NULL DEFAULT 'draft'
                         CHECK (status IN ('draft', 'running', 'stopped', 'done', 'withdrawn')),
    mode         TEXT    NOT NULL DEFAULT 'autonomous' CHECK (mode IN ('autonomous', 'guided')),
    request      TEXT    NOT NULL, -- as the person typed it
    -- The analysis: JSON arrays of strings.
    restated     TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(restated) = 'array'),
    fits         TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(fits) = 'array'),
    conflicts    TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(conflicts) = 'array'),
    out_of_reach TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(out_of_reach) = 'array'),
    assumptions  TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(assumptions) = 'array'),
    questions    TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(questions) = 'array'),
    submitted_at INTEGER,
    stop_reason  TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    -- Lets tasks name (intent, app) together, so a task's app_id is its intent's.
    UNIQUE (id, app_id)
);
CREATE INDEX intents_app ON intents (app_id, id DESC);
-- An application has at most one draft.
CREATE UNIQUE INDEX intents_one_draft ON intents (app_id) WHERE status = 'draft';

-- A task: its plan (arrays as JSON text), the owner's model, its status and
-- what moveTask stamps.
CREATE TABLE tasks (
    id              INTEGER PRIMARY KEY,
    intent_id       INTEGER NOT NULL,
    app_id          TEXT    NOT NULL,
    slug            TEXT    NOT NULL,
    title           TEXT    NOT NULL,
    priority        TEXT    NOT NULL,
    labels          TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(labels) = 'array'),
    blocked_by      TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(blocked_by) = 'array'),
    estimated_lines INTEGER NOT NULL,
    locks           TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(locks) = 'array'),
    risk            TEXT    NOT NULL,
    stub            INTEGER NOT NULL DEFAULT 0 CHECK (stub IN (0, 1)),
    repaid_by       TEXT    NOT NULL DEFAULT '',
    reasoning       TEXT    NOT NULL,
    summary         TEXT    NOT NULL,
    criteria        TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(criteria) = 'array'), -- [{text, failure}]
    no_failure_path TEXT    NOT NULL DEFAULT '',
    non_functional  TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(non_functional) = 'array'),
    test_notes      TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(test_notes) = 'array'),
    runbook         TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(runbook) = 'array'),
    model           TEXT    NOT NULL DEFAULT '', -- the owner's choice; '' = none
    status          TEXT    NOT NULL DEFAULT 'proposed'
                            CHECK (status IN ('proposed', 'in-queue', 'in-progress', 'completed',
                                              'failed', 'interrupted', 'needs-answer', 'removed')),
    question        TEXT    NOT NULL DEFAULT '',
    answers         TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(answers) = 'array'), -- [{question, answer, at}]
    started_at      INTEGER,
    ended_at        INTEGER,
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    run_ids         TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(run_ids) = 'array'),
    rev_after       TEXT    NOT NULL DEFAULT '',
    release_id      TEXT    REFERENCES releases (id),
    actual_lines    INTEGER,
    example_hashes  TEXT    NOT NULL DEFAULT '{}' CHECK (json_type(example_hashes) = 'object'), -- criterion n → hash
    advice          TEXT    NOT NULL DEFAULT '', -- the planning model's, when the task failed
    created_at      INTEGER NOT NULL,
    FOREIGN KEY (intent_id, app_id) REFERENCES intents (id, app_id),
    UNIQUE (app_id, slug)
);
CREATE INDEX tasks_intent ON tasks (intent_id, id);

-- The history of each task. Append-only. from_status is '' on the event
-- that records the task being proposed.
CREATE TABLE task_events (
    id          INTEGER PRIMARY KEY,
    task_id     INTEGER NOT NULL REFERENCES tasks (id),
    at          INTEGER NOT NULL,
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    reason      TEXT    NOT NULL DEFAULT '',
    run_id      TEXT    NOT NULL DEFAULT '',
    actor       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX task_events_task ON task_events (task_id, id);
CREATE TRIGGER task_events_no_update BEFORE UPDATE ON task_events
BEGIN SELECT RAISE(ABORT, 'task_events are append-only'); END;
CREATE TRIGGER task_events_no_delete BEFORE DELETE ON task_events
BEGIN SELECT RAISE(ABORT, 'task_events are append-only'); END;

-- The history of each intent. Append-only. from_status is '' on the event
-- that records the draft being opened.
CREATE TABLE intent_events (
    id          INTEGER PRIMARY KEY,
    intent_id   INTEGER NOT NULL REFERENCES intents (id),
    at          INTEGER NOT NULL,
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    reason      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX intent_events_intent ON intent_events (intent_id, id);
CREATE TRIGGER intent_events_no_update BEFORE UPDATE ON intent_events
BEGIN SELECT RAISE(ABORT, 'intent_events are append-only'); END;
CREATE TRIGGER intent_events_no_delete BEFORE DELETE ON intent_events
BEGIN SELECT RAISE(ABORT, 'intent_events are append-only'); END;

-- Each run id that started a task, and which attempt it was.
CREATE TABLE task_runs (
    run_id  TEXT    PRIMARY KEY,
    task_id INTEGER NOT NULL REFERENCES tasks (id),
    attempt INTEGER NOT NULL
);
CREATE INDEX task_runs_task ON task_runs (task_id);

-- Operation ids of the owner's writes already applied, so a repeated submit
-- changes nothing.
CREATE TABLE operations (
    op_id   TEXT    PRIMARY KEY,
    kind    TEXT    NOT NULL,
    subject TEXT    NOT NULL DEFAULT '',
    at      INTEGER NOT NULL
);
