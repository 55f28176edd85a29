-- The examples completed tasks are held to are read at every verdict: an
-- index of only the completed tasks that keep hashes lets that read visit
-- those, not every task the application ever completed.
CREATE INDEX tasks_examples_held ON tasks (app_id) WHERE status = 'completed' AND example_hashes <> '{}';
