-- Replays: each finished run of a replay, one row a run. A replay runs the
-- engineer again on a case's request, from the revision the failure was
-- met at, with the lesson under test and without it, and then the
-- regression set (the application's other resolved cases whose lesson is
-- confirmed, given the new lesson once each). What was held still is the
-- manifest, written as a blob before anything runs; every row of the
-- replay names it. A row is written only when its run finished and was
-- judged: a replay stopped half-way leaves the runs that finished and no
-- half row. Rows are never changed and never deleted.
--
-- of_case_id is the case the replay was started for; case_id the case this
-- run replayed (another one in the regression arm). lesson_id is the
-- lesson under test, on every row of the replay, NULL when there was none
-- (then only the without arm ran); the with and regression arms were given
-- it, the without arm no lesson at all. n numbers the
-- run's folder under its arm, <root>/replay/<case_id>/<arm>/<n>/. Neither
-- case nor lesson is a foreign key, as cases.context_id is not. ended is
-- how the turn ended (answered, steps, wall, idle, refusals), calls the tool
-- calls it made, the tokens what it reported. Times are Unix milliseconds.
CREATE TABLE replays (
    id            INTEGER PRIMARY KEY,
    manifest_hash TEXT    NOT NULL REFERENCES blobs (hash),
    of_case_id    INTEGER NOT NULL,
    case_id       INTEGER NOT NULL,
    lesson_id     INTEGER,
    arm           TEXT    NOT NULL CHECK (arm IN ('with', 'without', 'regression')),
    n             INTEGER NOT NULL CHECK (n >= 1),
    run_id        TEXT    NOT NULL CHECK (run_id <> ''),
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER NOT NULL,
    passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
    judgement     TEXT    NOT NULL CHECK (judgement <> ''),
    ended         TEXT    NOT NULL,
    calls         INTEGER NOT NULL DEFAULT 0 CHECK (calls >= 0),
    input_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    CHECK (arm = 'without' OR lesson_id IS NOT NULL),
    CHECK (arm <> 'regression' OR (lesson_id IS NOT NULL AND case_id <> of_case_id))
);
CREATE INDEX replays_manifest ON replays (manifest_hash, id);
CREATE INDEX replays_of_case ON replays (of_case_id, id);
CREATE INDEX replays_lesson ON replays (lesson_id, id) WHERE lesson_id IS NOT NULL;
CREATE INDEX replays_case_arm ON replays (case_id, arm, n);

CREATE TRIGGER replays_no_update BEFORE UPDATE ON replays
BEGIN SELECT RAISE(ABORT, 'a replay''s runs are never changed'); END;
CREATE TRIGGER replays_no_delete BEFORE DELETE ON replays
BEGIN SELECT RAISE(ABORT, 'a replay''s runs are never deleted'); END;
