-- The highest task number each application has given, so that a new task
-- takes the next one without reading every slug. Numbers are never reused;
-- past 9999 they have more digits (10000-add-tags). The trigger keeps the
-- counter at the highest number any task row holds, however the row came.
CREATE TABLE task_numbers (
    app_id TEXT    PRIMARY KEY REFERENCES apps (id),
    last   INTEGER NOT NULL CHECK (last >= 0)
);

-- The tasks written before this table: a slug is its number, a dash, its words.
INSERT INTO task_numbers (app_id, last)
SELECT app_id, max(CAST(substr(slug, 1, instr(slug, '-') - 1) AS INTEGER)) FROM tasks GROUP BY app_id;

CREATE TRIGGER tasks_number AFTER INSERT ON tasks
BEGIN
    INSERT INTO task_numbers (app_id, last)
    VALUES (NEW.app_id, CAST(substr(NEW.slug, 1, instr(NEW.slug, '-') - 1) AS INTEGER))
    ON CONFLICT (app_id) DO UPDATE SET last = max(last, excluded.last);
END;
