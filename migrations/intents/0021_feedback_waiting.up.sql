-- Applied feedback that waits for the next chat turn: the rail's mark and
-- the chat turn read it on every page, and it stays a few rows however
-- many interventions the history holds.
CREATE INDEX intervention_applied_waiting ON intervention_applied (ord) WHERE given_run = '';
