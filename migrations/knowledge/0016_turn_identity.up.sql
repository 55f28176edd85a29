-- A turn's contexts row and each thing its run did (run_work) keep the
-- rest of the identity they were written under, as the events do: the call
-- of the run loop's envelope (<runId>:<n>, <runId>:<n>.build, <runId>:turn
-- …), and the release and workspace revision the application stood at. A
-- row with no origin in a turn, such as the owner's own build, keeps NULL.
ALTER TABLE contexts ADD COLUMN call_id TEXT;
ALTER TABLE contexts ADD COLUMN release_id TEXT;
ALTER TABLE contexts ADD COLUMN revision TEXT;
ALTER TABLE run_work ADD COLUMN call_id TEXT;
ALTER TABLE run_work ADD COLUMN release_id TEXT;
ALTER TABLE run_work ADD COLUMN revision TEXT;
