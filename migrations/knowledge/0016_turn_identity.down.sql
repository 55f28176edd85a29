ALTER TABLE run_work DROP COLUMN revision;
ALTER TABLE run_work DROP COLUMN release_id;
ALTER TABLE run_work DROP COLUMN call_id;
ALTER TABLE contexts DROP COLUMN revision;
ALTER TABLE contexts DROP COLUMN release_id;
ALTER TABLE contexts DROP COLUMN call_id;
