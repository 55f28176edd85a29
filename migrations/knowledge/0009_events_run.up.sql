-- A retry's attempts document reads what each earlier attempt of its task
-- left (the events "an attempt ended" and "the planning model read a
-- failure") by the attempts' run ids.
CREATE INDEX events_run ON events (run_id, message) WHERE run_id IS NOT NULL;
