-- Scorecards: one row a model a comparison (`knowledge evaluate --models`,
-- or Settings → Compare models). Every model of a comparison ran the same
-- tasks under the same condition, each task tried up to twice as a run
-- tries it; the row is what the host saw of that model's turns. Settings
-- shows each model's newest row. A row is written only once its model
-- finished every task: a comparison stopped half-way leaves the models
-- that finished and no half row. Rows are never changed and never deleted.
--
-- model is the reference the turns were sent to (provider:model); stamp
-- names the comparison's folder, <root>/evaluate/<stamp>/. tasks is how many
-- tasks it ran, working_code and workflow how many of them ended with the
-- evaluation's example passing on what was left and with the engineer's
-- own checks passing, attempts the turns they took together.
-- first_edit_calls is the calls up to each task's first edit that landed,
-- summed over the first_edit_tasks that made one. from_text counts the
-- calls read from the model's text, invalid_inputs those refused against
-- the tool's schema. tokens is what every turn reported; tokens_reported
-- says every step of every turn reported. Times are Unix milliseconds.
CREATE TABLE scorecards (
    id               INTEGER PRIMARY KEY,
    model            TEXT    NOT NULL CHECK (model <> ''),
    stamp            TEXT    NOT NULL CHECK (stamp <> ''),
    condition        TEXT    NOT NULL CHECK (condition <> ''),
    measured_at      INTEGER NOT NULL,
    tasks            INTEGER NOT NULL CHECK (tasks >= 1),
    working_code     INTEGER NOT NULL CHECK (working_code BETWEEN 0 AND tasks),
    workflow         INTEGER NOT NULL CHECK (workflow BETWEEN 0 AND tasks),
    attempts         INTEGER NOT NULL CHECK (attempts >= tasks),
    first_edit_calls INTEGER NOT NULL CHECK (first_edit_calls >= 0),
    first_edit_tasks INTEGER NOT NULL CHECK (first_edit_tasks BETWEEN 0 AND tasks),
    from_text        INTEGER NOT NULL CHECK (from_text >= 0),
    invalid_inputs   INTEGER NOT NULL CHECK (invalid_inputs >= 0),
    tokens           INTEGER NOT NULL CHECK (tokens >= 0),
    tokens_reported  INTEGER NOT NULL CHECK (tokens_reported IN (0, 1)),
    wall_ms          INTEGER NOT NULL CHECK (wall_ms >= 0)
);
CREATE INDEX scorecards_model ON scorecards (model, id);

CREATE TRIGGER scorecards_no_update BEFORE UPDATE ON scorecards
BEGIN SELECT RAISE(ABORT, 'a scorecard is never changed'); END;
CREATE TRIGGER scorecards_no_delete BEFORE DELETE ON scorecards
BEGIN SELECT RAISE(ABORT, 'a scorecard is never deleted'); END;
