DROP TRIGGER scorecards_no_delete;
DROP TRIGGER scorecards_no_update;
DROP INDEX scorecards_model;
DROP TABLE scorecards;
